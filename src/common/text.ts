/** One line without control characters (\p{Cc}: C0, DEL, C1): safe in a mail header or a log line. */
export const NO_CONTROL_CHARS = /^\P{Cc}*$/u;

/** Any control character, for replacing. */
export const CONTROL_CHARS = /\p{Cc}+/gu;
