/**
 * One line without control characters (\p{Cc}: C0, DEL, C1 such as U+0085 NEL) or the Unicode line and
 * paragraph separators: safe in a mail header, a mail line or a log line.
 */
export const NO_CONTROL_CHARS = /^[^\p{Cc}\u2028\u2029]*$/u;

/** Text of several lines: line breaks and tabs, but no other control character. */
export const NO_CONTROL_CHARS_BUT_LINES = /^(?:[\t\n\r]|[^\p{Cc}\u2028\u2029])*$/u;

/** Any run of control characters or line separators, for replacing. */
export const CONTROL_CHARS = /[\p{Cc}\u2028\u2029]+/gu;

/** `text` on one line: each run of control characters (line breaks included) becomes one space, trimmed. */
export function oneLine(text: string): string {
  return text.replace(CONTROL_CHARS, ' ').replace(/ {2,}/g, ' ').trim();
}
