import type { ResultStatus } from '../../results/entities.js';
import { cutChars, isBlank, quote, toTimestamp, trimBlankLines } from './report-fields.js';
import {
  MAX_ATTRIBUTE_KEY_CHARS,
  MAX_ATTRIBUTE_VALUE_CHARS,
  MAX_DURATION_MS,
  MAX_NAME_CHARS,
  MAX_OUTPUT_CHARS,
  MAX_RESULT_ATTRIBUTES,
  MAX_RETRY,
  MAX_SUITE_CHARS,
  MAX_TEXT_CHARS,
  type ParsedResult,
  type ReportSink,
} from './report-parser.js';

export const UNNAMED = '(unnamed)';

/** An earlier attempt of the test a draft holds, which its parser writes out before the test's own result. */
export interface EarlierAttempt {
  status: ResultStatus;
  message?: string;
  trace?: string;
  durationMs?: number;
}

/** Distinct warning kinds kept per report; a report that trips more is reported as "and N more". */
const MAX_WARNING_KINDS = 50;

/**
 * The result a format parser is building, in plain fields ('' and NaN for "none") so that one object can be
 * reset and reused per testcase. The emitter turns it into a ParsedResult within the writer's limits.
 */
export class ResultDraft {
  name = '';
  suite = '';
  status: ResultStatus = 'PASSED';
  durationMs = NaN;
  message = '';
  trace = '';
  stdout = '';
  stderr = '';
  startedAt = '';
  retry = 0;
  attributes: Record<string, string> | undefined = undefined;
  attributeCount = 0;
  attributesDropped = 0;

  /** A repeated key (several categories, traits of one name) gathers its values, comma-separated. */
  addAttribute(key: string, value: string): void {
    if (this.attributes === undefined) {
      // No prototype: a report's "__proto__" or "constructor" is a key like any other.
      this.attributes = Object.create(null) as Record<string, string>;
    }
    const previous = this.attributes[key];
    if (previous !== undefined) {
      if (previous.length < MAX_ATTRIBUTE_VALUE_CHARS) {
        this.attributes[key] = `${previous}, ${value}`;
      }
    } else if (this.attributeCount < MAX_RESULT_ATTRIBUTES) {
      this.attributes[key] = value;
      this.attributeCount++;
    } else {
      this.attributesDropped++;
    }
  }

  reset(): void {
    this.name = '';
    this.suite = '';
    this.status = 'PASSED';
    this.durationMs = NaN;
    this.message = '';
    this.trace = '';
    this.stdout = '';
    this.stderr = '';
    this.startedAt = '';
    this.retry = 0;
    this.attributes = undefined;
    this.attributeCount = 0;
    this.attributesDropped = 0;
  }
}

/** Warnings by kind: the first occurrence's text, and how many more there were. */
export class WarningLog {
  private readonly entries = new Map<string, { text: string; count: number }>();
  private omitted = 0;

  add(kind: string, text: string): void {
    const entry = this.entries.get(kind);
    if (entry !== undefined) {
      entry.count++;
    } else if (this.entries.size < MAX_WARNING_KINDS) {
      this.entries.set(kind, { text, count: 1 });
    } else {
      this.omitted++;
    }
  }

  lines(): string[] {
    const lines: string[] = [];
    for (const { text, count } of this.entries.values()) {
      lines.push(count > 1 ? `${text} (and ${count - 1} more like it)` : text);
    }
    if (this.omitted > 0) {
      lines.push(`${this.omitted} further warnings of other kinds were left out`);
    }
    return lines;
  }
}

/**
 * Applies the writer's limits to each result (cutting, never refusing, with one warning per kind) and hands
 * results to the sink (parseReport counts them).
 */
export class ResultEmitter {
  private readonly warnings = new WarningLog();

  /**
   * @param repair JSON can carry NUL and unpaired surrogates (\u0000, \ud800), which PostgreSQL refuses; XML
   * cannot (saxes rejects them), so XML parsers skip the check.
   */
  constructor(
    private readonly sink: ReportSink,
    private readonly repair: boolean,
  ) {}

  warn(kind: string, text: string): void {
    this.warnings.add(kind, text);
  }

  /**
   * BROKEN, with a warning (one kind per value), for a status the format does not define: `what` names the
   * field ("TestNG status"), `where` optionally follows the test's name.
   */
  unknownStatus(what: string, value: string, test: string, where = ''): ResultStatus {
    this.warn(
      `status:${value}`,
      `Unknown ${what} ${quote(value)} (test ${quote(test)}${where}); imported as BROKEN`,
    );
    return 'BROKEN';
  }

  emit(draft: ResultDraft): void {
    let name =
      draft.name.length > 0 ? this.fit(draft.name, MAX_NAME_CHARS, 'name', draft.name, 'its name') : '';
    if (isBlank(name)) {
      this.warn('unnamed', `A test without a name was imported as ${quote(UNNAMED)}`);
      name = UNNAMED;
    }
    // Only the fields there are: a field set to undefined would still be a field to a schema validator.
    const result: ParsedResult = { name: detached(name), status: draft.status };
    if (draft.suite.length > 0) {
      const suite = this.fit(draft.suite, MAX_SUITE_CHARS, 'suite', name, 'its suite');
      if (suite.length > 0) {
        result.suite = detached(suite);
      }
    }
    const duration = draft.durationMs;
    if (duration >= 0) {
      if (duration <= MAX_DURATION_MS) {
        result.durationMs = duration;
      } else {
        this.warn('duration', `Test ${quote(name)} has a duration beyond one year; it was left out`);
      }
    }
    const message = draft.message.length > 0 ? draft.message.trim() : '';
    if (message.length > 0) {
      result.message = this.fit(message, MAX_TEXT_CHARS, 'message', name, 'its message');
    }
    const trace = this.composeTrace(draft, name);
    if (trace.length > 0) {
      result.trace = trace;
    }
    if (draft.startedAt.length > 0) {
      const startedAt = toTimestamp(draft.startedAt);
      if (startedAt !== undefined) {
        result.startedAt = startedAt;
      } else {
        this.warn(
          'startedAt',
          `Start times without a UTC offset (or not ISO 8601), such as ${quote(draft.startedAt)}, were left ` +
            'out: the report does not say which time zone they are in',
        );
      }
    }
    if (draft.attributes !== undefined) {
      const attributes = this.fitAttributes(draft, name);
      if (attributes !== undefined) {
        result.attributes = attributes;
      }
    }
    if (draft.retry > 0) {
      result.retry = Math.min(draft.retry, MAX_RETRY);
    }

    this.sink.result(result);
  }

  /**
   * The earlier attempts of the test `draft` holds (Surefire's rerun elements, CTRF's retries), each as a result of
   * it: the draft's name, suite, start and attributes, the attempt's status, message, trace and duration, no output,
   * retries 0, 1, …. The draft is left as it was, for its own result.
   */
  emitAttempts(draft: ResultDraft, attempts: readonly EarlierAttempt[]): void {
    const own = { ...draft };
    draft.stdout = '';
    draft.stderr = '';
    attempts.forEach((attempt, retry) => {
      draft.status = attempt.status;
      draft.message = attempt.message ?? '';
      draft.trace = attempt.trace ?? '';
      draft.durationMs = attempt.durationMs ?? NaN;
      draft.retry = retry;
      this.emit(draft);
    });
    Object.assign(draft, own);
  }

  /** Hands the warnings to the sink; called once, at the end of the report. */
  finish(): void {
    for (const line of this.warnings.lines()) {
      this.sink.warning(line);
    }
  }

  /** The trace, then the test's output under headings, each part within its limit. */
  private composeTrace(draft: ResultDraft, name: string): string {
    const stack = draft.trace.length > 0 ? trimBlankLines(draft.trace) : '';
    let trace = stack.length > 0 ? this.fit(stack, MAX_TEXT_CHARS, 'trace', name, 'its trace') : '';
    const stdout = draft.stdout.length > 0 ? trimBlankLines(draft.stdout) : '';
    if (stdout.length > 0) {
      const out = this.fit(stdout, MAX_OUTPUT_CHARS, 'stdout', name, 'its standard output');
      trace = trace.length > 0 ? `${trace}\n\n[stdout]\n${out}` : `[stdout]\n${out}`;
    }
    const stderr = draft.stderr.length > 0 ? trimBlankLines(draft.stderr) : '';
    if (stderr.length > 0) {
      const err = this.fit(stderr, MAX_OUTPUT_CHARS, 'stderr', name, 'its standard error');
      trace = trace.length > 0 ? `${trace}\n\n[stderr]\n${err}` : `[stderr]\n${err}`;
    }
    return trace;
  }

  private fitAttributes(draft: ResultDraft, name: string): Record<string, string> | undefined {
    const attributes = draft.attributes!;
    if (draft.attributesDropped > 0) {
      this.warn(
        'attributes',
        `Test ${quote(name)} has more than ${MAX_RESULT_ATTRIBUTES} attributes; ${draft.attributesDropped} were left out`,
      );
    }
    let fits = !this.repair;
    if (fits) {
      for (const key in attributes) {
        if (
          key.length > MAX_ATTRIBUTE_KEY_CHARS ||
          isBlank(key) ||
          attributes[key].length > MAX_ATTRIBUTE_VALUE_CHARS
        ) {
          fits = false;
          break;
        }
      }
    }
    if (fits) {
      return draft.attributeCount > 0 ? attributes : undefined;
    }
    // Rebuilt rather than changed in place, so that a cut key cannot overwrite one kept as it was.
    const fitted = Object.create(null) as Record<string, string>;
    let count = 0;
    for (const key in attributes) {
      if (isBlank(key)) {
        this.warn('attributeKey', `Test ${quote(name)} has an attribute without a name; it was left out`);
        continue;
      }
      const fittedKey = this.fit(key, MAX_ATTRIBUTE_KEY_CHARS, 'attributeKey', name, 'an attribute name');
      if (fitted[fittedKey] === undefined) {
        fitted[fittedKey] = this.fit(
          attributes[key],
          MAX_ATTRIBUTE_VALUE_CHARS,
          'attributeValue',
          name,
          `its attribute ${quote(fittedKey)}`,
        );
        count++;
      }
    }
    return count > 0 ? fitted : undefined;
  }

  /** `value` within `max` code points (and storable), with a warning when it had to be changed. */
  private fit(value: string, max: number, kind: string, name: string, what: string): string {
    let fitted = value;
    if (this.repair) {
      if (fitted.includes('\0')) {
        fitted = fitted.replaceAll('\0', '');
        this.warn('nul', `Test ${quote(name)}: NUL characters were removed from ${what}`);
      }
      if (!fitted.isWellFormed()) {
        fitted = fitted.toWellFormed();
        this.warn('surrogate', `Test ${quote(name)}: unpaired surrogates in ${what} were replaced by U+FFFD`);
      }
    }
    const cut = cutChars(fitted, max);
    if (cut !== fitted) {
      this.warn(`cut:${kind}`, `Test ${quote(name)}: ${what} was cut to ${max} characters`);
    }
    return cut;
  }
}

/**
 * A copy of `text` that does not keep the decoded chunk it was cut from alive. V8 represents a substring as a
 * slice of its parent, so a test name that outlives the parse (in the writer's test-case cache) held on to the
 * whole 64 KiB chunk it came from: importing 37 MB left 40 MB of chunks reachable. The concatenation makes a
 * string of the name's own length, which the slice then refers to.
 */
function detached(text: string): string {
  return (' ' + text).slice(1);
}
