import { isTimestamp } from '../../common/formats.js';

/**
 * `value` cut to at most `max` characters as PostgreSQL counts them (code points), never splitting a surrogate
 * pair; the same string when it fits, so callers can tell by identity whether it was cut.
 */
export function cutChars(value: string, max: number): string {
  if (value.length <= max) {
    return value;
  }
  let units = 0;
  for (let points = 0; points < max && units < value.length; points++) {
    const c = value.charCodeAt(units);
    const pair =
      c >= 0xd800 &&
      c <= 0xdbff &&
      units + 1 < value.length &&
      (value.charCodeAt(units + 1) & 0xfc00) === 0xdc00;
    units += pair ? 2 : 1;
  }
  return units >= value.length ? value : value.slice(0, units);
}

/** True when `value` holds no visible character (the writer refuses such a name). */
export function isBlank(value: string): boolean {
  if (value.length === 0) {
    return true;
  }
  const first = value.charCodeAt(0);
  // The common case, a name starting with a printable ASCII character, without trim()'s copy.
  if (first > 0x20 && first < 0x7f) {
    return false;
  }
  return value.trim().length === 0;
}

/**
 * Text capped while it is collected. It keeps up to twice the limit in UTF-16 units (plus one pair), so that a
 * text that was cut is still longer than the limit in code points and the emitter's cut reports it.
 */
export class TextBuffer {
  text = '';
  private readonly keep: number;

  constructor(max: number) {
    this.keep = max * 2 + 2;
  }

  append(part: string): void {
    const room = this.keep - this.text.length;
    if (room <= 0) {
      return;
    }
    this.text += part.length <= room ? part : part.slice(0, room);
  }

  take(): string {
    const text = this.text;
    this.text = '';
    return text;
  }
}

/**
 * Seconds as JUnit, NUnit and xUnit write them ("0.123", and in some locales "0,123" or "1,234.5") to whole
 * milliseconds; NaN when there is none.
 */
export function secondsToMs(text: string | undefined): number {
  if (!text) {
    return NaN;
  }
  let s = text;
  if (s.includes(',')) {
    s = s.includes('.') ? s.replaceAll(',', '') : s.replace(',', '.');
  }
  const seconds = Number(s);
  return seconds >= 0 ? Math.round(seconds * 1000) : NaN;
}

/** A .NET TimeSpan as TRX writes it ("00:00:01.2345678", with days "1.02:03:04.5") to milliseconds; NaN if not one. */
export function timeSpanToMs(text: string | undefined): number {
  if (!text) {
    return NaN;
  }
  const parts = text.split(':');
  if (parts.length !== 3) {
    return NaN;
  }
  let hours = parts[0];
  let days = 0;
  const dot = hours.indexOf('.');
  if (dot !== -1) {
    days = Number(hours.slice(0, dot));
    hours = hours.slice(dot + 1);
  }
  const ms = (((days * 24 + Number(hours)) * 60 + Number(parts[1])) * 60 + Number(parts[2])) * 1000;
  return ms >= 0 ? Math.round(ms) : NaN;
}

/** isTimestamp without its type guard, which would narrow a string that fails it to never. */
function isIso(value: string): boolean {
  return isTimestamp(value);
}

let lastStampIn = '';
let lastStampOut: string | undefined;

/**
 * A report's timestamp as the writer takes it (ISO 8601 with Z or an offset), or undefined. NUnit's
 * "2018-03-14 20:10:20Z" gets its T, and a time that names UTC or GMT in words (TestNG's "... UTC", Mocha's
 * "Sat, 03 Dec 2022 23:10:07 GMT") becomes one; a time without an offset is not guessed at. Memoised on the
 * last value: JUnit gives every testcase of a suite the suite's timestamp.
 */
export function toTimestamp(text: string): string | undefined {
  if (text === lastStampIn) {
    return lastStampOut;
  }
  lastStampIn = text;
  lastStampOut = undefined;
  let value = text.trim();
  if (value.length > 10 && value.charCodeAt(10) === 0x20) {
    value = `${value.slice(0, 10)}T${value.slice(11)}`;
  }
  if (isIso(value)) {
    lastStampOut = value;
  } else if (value.endsWith(' UTC') || value.endsWith(' GMT')) {
    const zulu = `${value.slice(0, -4)}Z`;
    if (isIso(zulu)) {
      lastStampOut = zulu;
    } else {
      const time = Date.parse(text);
      const iso = Number.isFinite(time) ? new Date(time).toISOString() : '';
      lastStampOut = isIso(iso) ? iso : undefined;
    }
  }
  return lastStampOut;
}

/** `text` without its leading blank lines and trailing white space; '' when that is all there is. */
export function trimBlankLines(text: string): string {
  let start = 0;
  let i = 0;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a) {
      start = i + 1;
    } else if (c !== 0x20 && c !== 0x09 && c !== 0x0d) {
      break;
    }
  }
  if (i === text.length) {
    return '';
  }
  let end = text.length;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) {
    end--;
  }
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/**
 * "Ns.Class.Method(args)" to ["Ns.Class", "Method(args)"]: the class is the suite. Undefined when the text is
 * no qualified name (no dot before the arguments, or spaces in the would-be class: a display name).
 */
export function splitQualifiedName(full: string): [string, string] | undefined {
  const paren = full.indexOf('(');
  const head = paren === -1 ? full.length : paren;
  const dot = head > 0 ? full.lastIndexOf('.', head - 1) : -1;
  if (dot <= 0 || dot >= head - 1) {
    return undefined;
  }
  const suite = full.slice(0, dot);
  if (suite.includes(' ')) {
    return undefined;
  }
  return [suite, full.slice(dot + 1)];
}

/** The first non-empty line of `text`, trimmed, for a message when the report gives only a stack trace. */
export function firstLine(text: string): string {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) {
      end = text.length;
    }
    const line = text.slice(start, end).trim();
    if (line.length > 0) {
      return line;
    }
    start = end + 1;
  }
  return '';
}

/** Shortens a name for a warning. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 120 ? `${value.slice(0, 117)}...` : value);
}
