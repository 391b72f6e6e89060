import { MAX_COLLECT_CHARS, MAX_DEPTH, MAX_TOKEN_CHARS, ReportError } from './report-parser.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonKind = 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';
/** Keys and array indices from the root to a value. Valid only during the handler call that receives it. */
export type JsonPath = readonly (string | number)[];
/**
 * What to do with a value that starts: build it and hand it to `value` (collect), walk into it and ask again
 * for each member (descend; objects and arrays only), or read over it keeping nothing (skip).
 */
export type JsonChoice = 'collect' | 'descend' | 'skip';

export interface JsonHandler {
  /** Asked for the root and for every member of a container it descended into. */
  select(path: JsonPath, kind: JsonKind): JsonChoice;
  /** A collected value, complete. */
  value(path: JsonPath, value: JsonValue): void;
  /** A container it descended into has closed. */
  leave?(path: JsonPath, kind: 'object' | 'array'): void;
}

export interface JsonStreamOptions {
  /** Containers nested deeper are refused (LIMIT). */
  maxDepth?: number;
  /** Strings (and keys) in collected values are cut to this many UTF-16 units. */
  maxStringChars?: number;
  /** One collected value may hold about this many characters (strings, plus one per value); beyond it, LIMIT. */
  maxCollectChars?: number;
  /** Keys whose values are read over, not kept, inside collected values (attachments, screenshots ...). */
  skipKeys?: ReadonlySet<string>;
}

const DESCEND = 0;
const COLLECT = 1;
const SKIP = 2;

const OBJECT = 1;
const ARRAY = 2;

const S_VALUE = 0;
const S_VALUE_OR_END = 1;
const S_KEY_OR_END = 2;
const S_KEY = 3;
const S_COLON = 4;
const S_AFTER = 5;
const S_STRING = 6;
const S_ESCAPE = 7;
const S_UNICODE = 8;
const S_NUMBER = 9;
const S_LITERAL = 10;
const S_DONE = 11;

// Number grammar (RFC 8259): -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
const N_START = 0;
const N_MINUS = 1;
const N_ZERO = 2;
const N_INT = 3;
const N_DOT = 4;
const N_FRAC = 5;
const N_EXP = 6;
const N_EXP_SIGN = 7;
const N_EXP_DIGITS = 8;

const MAX_NUMBER_CHARS = 400;

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** The number state after `c`, or -1 when `c` does not continue the number. */
function numberStep(state: number, c: number): number {
  switch (state) {
    case N_START:
      return c === 0x2d ? N_MINUS : c === 0x30 ? N_ZERO : isDigit(c) ? N_INT : -1;
    case N_MINUS:
      return c === 0x30 ? N_ZERO : isDigit(c) ? N_INT : -1;
    case N_ZERO:
      return c === 0x2e ? N_DOT : c === 0x65 || c === 0x45 ? N_EXP : -1;
    case N_INT:
      return isDigit(c) ? N_INT : c === 0x2e ? N_DOT : c === 0x65 || c === 0x45 ? N_EXP : -1;
    case N_DOT:
      return isDigit(c) ? N_FRAC : -1;
    case N_FRAC:
      return isDigit(c) ? N_FRAC : c === 0x65 || c === 0x45 ? N_EXP : -1;
    case N_EXP:
      return c === 0x2b || c === 0x2d ? N_EXP_SIGN : isDigit(c) ? N_EXP_DIGITS : -1;
    default: // N_EXP_SIGN, N_EXP_DIGITS
      return isDigit(c) ? N_EXP_DIGITS : -1;
  }
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) {
    return c - 0x30;
  }
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function setMember(box: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (key === '__proto__') {
    // A plain assignment would replace the object's prototype instead of adding the member.
    Object.defineProperty(box, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    box[key] = value;
  }
}

/**
 * An incremental JSON reader (RFC 8259) that materialises only the values its handler selects: text goes in
 * through `write` in pieces of any size, and memory holds the container stack plus the value being collected,
 * whatever the document's size. Errors name the line and column.
 */
export class JsonStream {
  private readonly maxDepth: number;
  private readonly maxStringChars: number;
  private readonly maxCollectChars: number;
  private readonly skipKeys: ReadonlySet<string> | undefined;

  private state = S_VALUE;
  private depth = 0;
  private readonly frameType: number[] = [];
  private readonly frameMode: number[] = [];
  private readonly frameBox: (JsonValue[] | Record<string, JsonValue> | null)[] = [];
  private readonly frameKey: string[] = [];
  private readonly frameIndex: number[] = [];
  /** One slot per descended container: the key or index of its member being read. */
  private readonly path: (string | number)[] = [];
  private collected = 0;

  // The token being read.
  private scalarMode = SKIP;
  private str = '';
  private strIsKey = false;
  private strKeep = false;
  private unicodeCount = 0;
  private unicodeCode = 0;
  private numberState = N_START;
  private numberText = '';
  private literal = '';
  private literalPos = 0;

  // Position, for errors: `offset` is the index of the current chunk's first character in the document.
  private offset = 0;
  private line = 1;
  private lineStart = 0;

  constructor(
    private readonly handler: JsonHandler,
    options: JsonStreamOptions = {},
  ) {
    this.maxDepth = options.maxDepth ?? MAX_DEPTH;
    this.maxStringChars = options.maxStringChars ?? MAX_TOKEN_CHARS;
    this.maxCollectChars = options.maxCollectChars ?? MAX_COLLECT_CHARS;
    this.skipKeys = options.skipKeys;
  }

  /** True once the root value is complete. */
  get done(): boolean {
    return this.state === S_DONE;
  }

  write(text: string): void {
    const n = text.length;
    let i = 0;
    while (i < n) {
      switch (this.state) {
        case S_STRING: {
          const start = i;
          let c = 0;
          for (; i < n; i++) {
            c = text.charCodeAt(i);
            if (c === 0x22 || c === 0x5c || c < 0x20) {
              break;
            }
          }
          if (this.strKeep && i > start) {
            this.appendString(text, start, i);
          }
          if (i < n) {
            if (c === 0x22) {
              i++;
              this.endString();
            } else if (c === 0x5c) {
              i++;
              this.state = S_ESCAPE;
            } else {
              this.fail(i, 'control character in a string (it must be escaped)');
            }
          }
          break;
        }
        case S_VALUE:
        case S_VALUE_OR_END: {
          i = this.skipSpace(text, i);
          if (i < n) {
            const c = text.charCodeAt(i);
            if (c === 0x5d && this.state === S_VALUE_OR_END) {
              i++;
              this.closeContainer();
            } else {
              i = this.startValue(text, i, c);
            }
          }
          break;
        }
        case S_AFTER: {
          i = this.skipSpace(text, i);
          if (i < n) {
            const c = text.charCodeAt(i);
            const type = this.frameType[this.depth - 1];
            if (c === 0x2c) {
              this.state = type === OBJECT ? S_KEY : S_VALUE;
            } else if ((c === 0x7d && type === OBJECT) || (c === 0x5d && type === ARRAY)) {
              this.closeContainer();
            } else {
              this.fail(
                i,
                `expected ',' or '${type === OBJECT ? '}' : ']'}' but found ${this.describe(text, i)}`,
              );
            }
            i++;
          }
          break;
        }
        case S_KEY_OR_END:
        case S_KEY: {
          i = this.skipSpace(text, i);
          if (i < n) {
            const c = text.charCodeAt(i);
            if (c === 0x22) {
              this.strIsKey = true;
              this.strKeep = this.frameMode[this.depth - 1] !== SKIP;
              this.str = '';
              this.state = S_STRING;
            } else if (c === 0x7d && this.state === S_KEY_OR_END) {
              this.closeContainer();
            } else {
              this.fail(i, `expected a property name in double quotes but found ${this.describe(text, i)}`);
            }
            i++;
          }
          break;
        }
        case S_COLON: {
          i = this.skipSpace(text, i);
          if (i < n) {
            if (text.charCodeAt(i) !== 0x3a) {
              this.fail(i, `expected ':' but found ${this.describe(text, i)}`);
            }
            this.state = S_VALUE;
            i++;
          }
          break;
        }
        case S_ESCAPE: {
          const c = text.charCodeAt(i);
          let ch: string;
          switch (c) {
            case 0x22:
              ch = '"';
              break;
            case 0x5c:
              ch = '\\';
              break;
            case 0x2f:
              ch = '/';
              break;
            case 0x62:
              ch = '\b';
              break;
            case 0x66:
              ch = '\f';
              break;
            case 0x6e:
              ch = '\n';
              break;
            case 0x72:
              ch = '\r';
              break;
            case 0x74:
              ch = '\t';
              break;
            case 0x75:
              this.unicodeCount = 0;
              this.unicodeCode = 0;
              this.state = S_UNICODE;
              i++;
              continue;
            default:
              this.fail(i, `invalid escape \\${text[i]}`);
          }
          if (this.strKeep) {
            this.appendChar(ch);
          }
          this.state = S_STRING;
          i++;
          break;
        }
        case S_UNICODE: {
          const digit = hexValue(text.charCodeAt(i));
          if (digit < 0) {
            this.fail(i, 'invalid \\u escape (four hex digits expected)');
          }
          this.unicodeCode = this.unicodeCode * 16 + digit;
          i++;
          if (++this.unicodeCount === 4) {
            // Surrogates are kept one unit at a time; a pair joins up again in the string. Unpaired ones are
            // left to the emitter, which repairs them.
            if (this.strKeep) {
              this.appendChar(String.fromCharCode(this.unicodeCode));
            }
            this.state = S_STRING;
          }
          break;
        }
        case S_NUMBER: {
          const start = i;
          let state = this.numberState;
          for (; i < n; i++) {
            const next = numberStep(state, text.charCodeAt(i));
            if (next < 0) {
              break;
            }
            state = next;
          }
          this.numberState = state;
          if (this.scalarMode === COLLECT) {
            this.numberText += text.slice(start, i);
            if (this.numberText.length > MAX_NUMBER_CHARS) {
              this.fail(i, `a number longer than ${MAX_NUMBER_CHARS} characters`);
            }
          }
          if (i < n) {
            this.endNumber(text, i);
          }
          break;
        }
        case S_LITERAL: {
          const word = this.literal;
          while (i < n && this.literalPos < word.length) {
            if (text.charCodeAt(i) !== word.charCodeAt(this.literalPos)) {
              this.fail(i, `unexpected ${this.describe(text, i)} (expected ${word})`);
            }
            i++;
            this.literalPos++;
          }
          if (this.literalPos === word.length) {
            this.endScalar(word === 'null' ? null : word === 'true');
          }
          break;
        }
        default: {
          // S_DONE
          i = this.skipSpace(text, i);
          if (i < n) {
            this.fail(i, `unexpected ${this.describe(text, i)} after the end of the document`);
          }
        }
      }
    }
    this.offset += n;
  }

  /** Checks that the document is complete. */
  end(): void {
    if (this.state === S_NUMBER && this.depth === 0) {
      this.endNumber('', 0);
    }
    if (this.state !== S_DONE) {
      const column = this.offset - this.lineStart + 1;
      throw new ReportError(
        'MALFORMED',
        `Not well-formed JSON at line ${this.line}, column ${column}: the document ends before its last value does`,
      );
    }
  }

  private skipSpace(text: string, from: number): number {
    let i = from;
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x0a) {
        this.line++;
        this.lineStart = this.offset + i + 1;
      } else if (c !== 0x20 && c !== 0x0d && c !== 0x09) {
        break;
      }
    }
    return i;
  }

  private startValue(text: string, i: number, c: number): number {
    switch (c) {
      case 0x7b:
        this.openContainer(OBJECT, i);
        return i + 1;
      case 0x5b:
        this.openContainer(ARRAY, i);
        return i + 1;
      case 0x22:
        this.scalarMode = this.modeFor('string');
        this.strIsKey = false;
        this.strKeep = this.scalarMode === COLLECT;
        this.str = '';
        this.state = S_STRING;
        return i + 1;
      case 0x74:
      case 0x66:
      case 0x6e:
        this.scalarMode = this.modeFor(c === 0x6e ? 'null' : 'boolean');
        this.literal = c === 0x74 ? 'true' : c === 0x66 ? 'false' : 'null';
        this.literalPos = 0;
        this.state = S_LITERAL;
        return i;
      default:
        if (c === 0x2d || isDigit(c)) {
          this.scalarMode = this.modeFor('number');
          this.numberState = N_START;
          this.numberText = '';
          this.state = S_NUMBER;
          return i;
        }
        return this.fail(i, `unexpected ${this.describe(text, i)} where a value was expected`);
    }
  }

  /** The mode of a value starting now, from its container's mode (and the handler, below a descended one). */
  private modeFor(kind: JsonKind): number {
    const top = this.depth - 1;
    if (top >= 0) {
      const parentMode = this.frameMode[top];
      if (parentMode === COLLECT) {
        return this.frameType[top] === OBJECT && this.skipKeys?.has(this.frameKey[top]) ? SKIP : COLLECT;
      }
      if (parentMode === SKIP) {
        return SKIP;
      }
      this.path[this.path.length - 1] =
        this.frameType[top] === ARRAY ? this.frameIndex[top] : this.frameKey[top];
    }
    const choice = this.handler.select(this.path, kind);
    if (choice === 'collect') {
      return COLLECT;
    }
    return choice === 'descend' && (kind === 'object' || kind === 'array') ? DESCEND : SKIP;
  }

  private openContainer(type: number, i: number): void {
    const mode = this.modeFor(type === OBJECT ? 'object' : 'array');
    if (this.depth >= this.maxDepth) {
      const column = this.offset + i - this.lineStart + 1;
      throw new ReportError(
        'LIMIT',
        `JSON nested deeper than ${this.maxDepth} levels at line ${this.line}, column ${column}`,
      );
    }
    let box: JsonValue[] | Record<string, JsonValue> | null = null;
    if (mode === COLLECT) {
      box = type === OBJECT ? {} : [];
      if (this.depth > 0 && this.frameMode[this.depth - 1] === COLLECT) {
        this.attach(box);
      } else {
        this.collected = 0;
      }
    } else if (mode === DESCEND) {
      this.path.push(0);
    }
    const d = this.depth++;
    this.frameType[d] = type;
    this.frameMode[d] = mode;
    this.frameBox[d] = box;
    this.frameKey[d] = '';
    this.frameIndex[d] = 0;
    this.state = type === OBJECT ? S_KEY_OR_END : S_VALUE_OR_END;
  }

  private closeContainer(): void {
    const d = --this.depth;
    const mode = this.frameMode[d];
    const box = this.frameBox[d];
    this.frameBox[d] = null;
    if (mode === DESCEND) {
      this.path.pop();
      this.handler.leave?.(this.path, this.frameType[d] === OBJECT ? 'object' : 'array');
    } else if (mode === COLLECT && (d === 0 || this.frameMode[d - 1] !== COLLECT)) {
      this.handler.value(this.path, box);
    }
    this.valueDone();
  }

  private valueDone(): void {
    if (this.depth === 0) {
      this.state = S_DONE;
    } else {
      const top = this.depth - 1;
      if (this.frameType[top] === ARRAY) {
        this.frameIndex[top]++;
      }
      this.state = S_AFTER;
    }
  }

  /** Adds a collected value to the collected container it belongs to. */
  private attach(value: JsonValue): void {
    const top = this.depth - 1;
    const box = this.frameBox[top]!;
    if (this.frameType[top] === ARRAY) {
      (box as JsonValue[]).push(value);
    } else {
      setMember(box as Record<string, JsonValue>, this.frameKey[top], value);
    }
    this.collected += typeof value === 'string' ? value.length + 1 : 1;
    if (this.collected > this.maxCollectChars) {
      throw new ReportError(
        'LIMIT',
        `One entry of the report (ending near line ${this.line}) holds more than ${this.maxCollectChars} characters`,
      );
    }
  }

  private endScalar(value: JsonValue): void {
    if (this.scalarMode === COLLECT) {
      if (this.depth > 0 && this.frameMode[this.depth - 1] === COLLECT) {
        this.attach(value);
      } else {
        this.handler.value(this.path, value);
      }
    }
    this.valueDone();
  }

  private endNumber(text: string, i: number): void {
    const state = this.numberState;
    if (state !== N_ZERO && state !== N_INT && state !== N_FRAC && state !== N_EXP_DIGITS) {
      this.fail(i, i < text.length ? `invalid number before ${this.describe(text, i)}` : 'incomplete number');
    }
    const value = this.scalarMode === COLLECT ? Number(this.numberText) : 0;
    this.numberText = '';
    this.endScalar(value);
  }

  private endString(): void {
    const value = this.str;
    this.str = '';
    if (this.strIsKey) {
      this.frameKey[this.depth - 1] = value;
      this.state = S_COLON;
    } else {
      this.endScalar(value);
    }
  }

  private appendString(text: string, start: number, end: number): void {
    const room = this.maxStringChars - this.str.length;
    if (room > 0) {
      this.str += end - start <= room ? text.slice(start, end) : text.slice(start, start + room);
    }
  }

  private appendChar(ch: string): void {
    if (this.str.length < this.maxStringChars) {
      this.str += ch;
    }
  }

  private describe(text: string, i: number): string {
    return JSON.stringify(String.fromCodePoint(text.codePointAt(i)!));
  }

  private fail(i: number, message: string): never {
    const column = this.offset + i - this.lineStart + 1;
    throw new ReportError(
      'MALFORMED',
      `Not well-formed JSON at line ${this.line}, column ${column}: ${message}`,
    );
  }
}
