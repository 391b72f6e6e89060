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

/**
 * Invisible format characters (Unicode category Cf): the bidirectional overrides, embeddings and isolates
 * (U+202A–202E, U+2066–2069) and marks (U+200E, U+200F, U+061C), zero-width characters (U+200B–200D, U+2060,
 * U+FEFF), the soft hyphen U+00AD, tag characters (U+E0001, U+E0020–E007F) and the rest of the category. In a name
 * they make it show as something it is not: "report\u202Egnp.exe" reads as "reportexe.png".
 */
const FORMAT_CHAR = /\p{Cf}/u;
const FORMAT_CHARS = /\p{Cf}/gu;
/** What may precede a joiner inside an emoji sequence: a pictograph, a skin tone, or the emoji presentation selector. */
const EMOJI_BEFORE_JOINER = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]$/u;
const EMOJI_AFTER_JOINER = /^\p{Extended_Pictographic}/u;

/**
 * U+200D ZERO WIDTH JOINER between two emoji (👩‍💻, ❤️‍🔥, 🏳️‍🌈) is the one format character kept: it only joins
 * pictures into one, and cannot reorder or hide text.
 */
function isEmojiJoiner(text: string, index: number): boolean {
  return (
    text.charCodeAt(index) === 0x200d &&
    EMOJI_BEFORE_JOINER.test(text.slice(Math.max(0, index - 2), index)) &&
    EMOJI_AFTER_JOINER.test(text.slice(index + 1, index + 3))
  );
}

/** The first invisible format character in `text` (see FORMAT_CHAR; an emoji's joiner is none), or undefined. */
export function formatCharacterIn(text: string): string | undefined {
  if (!FORMAT_CHAR.test(text)) {
    return undefined;
  }
  for (const match of text.matchAll(FORMAT_CHARS)) {
    if (!isEmojiJoiner(text, match.index)) {
      return match[0];
    }
  }
  return undefined;
}

/** `text` without its invisible format characters (an emoji's joiner stays); the same string when it has none. */
export function stripFormatCharacters(text: string): string {
  if (!FORMAT_CHAR.test(text)) {
    return text;
  }
  return text.replace(FORMAT_CHARS, (char: string, index: number) =>
    isEmojiJoiner(text, index) ? char : '',
  );
}

/** A character as `U+202E`. */
export function codePointOf(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
