/** Where the characters of a report go once the cutter has looked at them. */
export interface CutSink {
  /** Characters passed on, in order. */
  keep(segment: string): void;
  /** `text.slice(from, to)` was left out (it is not copied: the sink counts its lines if it needs to). */
  drop(text: string, from: number, to: number): void;
  /** A token is being cut (once per token). */
  cut(): void;
}

// Lexical states: enough of XML's grammar to tell text, attribute values, comments, CDATA sections and
// processing instructions from the markup around them.
const TEXT = 0;
const AFTER_LT = 1;
const BANG = 2;
const BANG_DASH = 3;
const CDATA_OPEN = 4;
const TAG = 5;
const ATTR = 6;
const COMMENT = 7;
const CDATA = 8;
const PI = 9;

const LT = 0x3c;
const GT = 0x3e;
const AMP = 0x26;
const SEMI = 0x3b;
const DASH = 0x2d;
const BRACKET = 0x5d;
const QUESTION = 0x3f;
const BANG_CHAR = 0x21;
const OPEN_BRACKET = 0x5b;
const DQUOTE = 0x22;
const SQUOTE = 0x27;

const CDATA_WORD = 'CDATA[';
/** An entity reference longer than this is no reference: its characters count (and saxes will refuse it). */
const MAX_ENTITY_CHARS = 32;

/**
 * Cuts every text run, attribute value, comment, CDATA section and processing instruction of an XML document
 * to `max` characters (an entity reference counts as one) before the XML parser sees it, as the text streams
 * through: what is left out is never copied or held, only scanned for where its token ends. saxes gathers a
 * token whole before handing it on (a 250 MB attribute value cost 250 MB and minutes of copying), and a report
 * needs no more than the first 64 KiB of any one of them.
 *
 * A cut never splits an entity reference or a surrogate pair, keeps the token's end (the closing quote, `<`,
 * `-->`, `]]>`, `?>`), and never leaves a comment ending in `-`, so a well-formed document stays well-formed.
 * What is left out is not checked for well-formedness. A document that is not well-formed is passed on as it is
 * up to where the parser refuses it.
 */
export class XmlTokenCutter {
  private state = TEXT;
  /** Characters of the current token so far. */
  private count = 0;
  private dropping = false;
  private quote = 0;
  /** Characters since `&` inside an entity reference; -1 outside one. */
  private entity = -1;
  /** The last character passed on. */
  private last = 0;
  /** The two characters before the current one, inside a comment, CDATA section or processing instruction. */
  private prev1 = 0;
  private prev2 = 0;
  /** How much of "CDATA[" has been read after `<![`. */
  private matched = 0;

  constructor(
    private readonly max: number,
    private readonly sink: CutSink,
  ) {}

  write(text: string): void {
    const n = text.length;
    const max = this.max;
    let start = 0;
    let i = 0;
    // Where the run looked at last ends (its `<` or quote, or the text's end) when it could not go on whole: not
    // looked for again before then, so that a long run costs one search, not one a character.
    let searched = -1;
    while (i < n) {
      if (this.dropping) {
        const end = this.dropEnd(text, i);
        this.sink.drop(text, i, end === -1 ? n : end);
        if (end === -1) {
          return;
        }
        this.dropping = false;
        this.count = 0;
        if (this.state === TEXT || this.state === ATTR) {
          // The `<` or quote that ends it goes on as it came.
          start = i = end;
        } else {
          // The terminator's last character: what it ends was left out, so the whole terminator is written.
          this.sink.keep(this.state === COMMENT ? '-->' : this.state === CDATA ? ']]>' : '?>');
          this.state = TEXT;
          start = i = end + 1;
        }
        continue;
      }
      if (i > searched && (this.state === TEXT || this.state === ATTR) && this.entity === -1) {
        // A run that ends in this text before the token could reach `max` (a character is at least one code unit)
        // goes on whole: its end (the `<` or quote) then resets the count, and no reference is open across it.
        const end = text.indexOf(this.state === TEXT ? '<' : this.quote === DQUOTE ? '"' : "'", i);
        if (end > i && this.count + (end - i) <= max) {
          this.count += end - i;
          this.last = text.charCodeAt(end - 1);
          i = end;
        } else {
          searched = end === -1 ? n : end;
        }
      }
      const c = text.charCodeAt(i);
      switch (this.state) {
        case TEXT:
          if (c === LT) {
            this.state = AFTER_LT;
            this.entity = -1;
            break;
          }
          if (this.countChar(c) && this.count > max && this.mayCut(c)) {
            start = this.startDropping(text, start, i);
            continue;
          }
          break;
        case ATTR:
          if (c === this.quote) {
            this.state = TAG;
            this.entity = -1;
            break;
          }
          if (this.countChar(c) && this.count > max && this.mayCut(c)) {
            start = this.startDropping(text, start, i);
            continue;
          }
          break;
        case TAG:
          if (c === DQUOTE || c === SQUOTE) {
            this.state = ATTR;
            this.quote = c;
            this.count = 0;
          } else if (c === GT) {
            this.state = TEXT;
            this.count = 0;
          }
          break;
        case AFTER_LT:
          if (c === BANG_CHAR) {
            this.state = BANG;
          } else if (c === QUESTION) {
            this.enter(PI);
          } else {
            this.state = TAG;
            continue; // the name's first character, or a quote or `>` where none belongs: TAG sees it
          }
          break;
        case BANG:
          if (c === DASH) {
            this.state = BANG_DASH;
          } else if (c === OPEN_BRACKET) {
            this.state = CDATA_OPEN;
            this.matched = 0;
          } else {
            this.state = TAG; // <!DOCTYPE and the like: refused by XmlStream before the root, by saxes after it
            continue;
          }
          break;
        case BANG_DASH:
          if (c === DASH) {
            this.enter(COMMENT);
          } else {
            this.state = TAG;
            continue;
          }
          break;
        case CDATA_OPEN:
          if (c !== CDATA_WORD.charCodeAt(this.matched)) {
            this.state = TAG;
            continue;
          }
          if (++this.matched === CDATA_WORD.length) {
            this.enter(CDATA);
          }
          break;
        default: {
          // COMMENT, CDATA, PI
          const state = this.state;
          if (
            c === GT &&
            (state === PI
              ? this.prev1 === QUESTION
              : state === COMMENT
                ? this.prev1 === DASH && this.prev2 === DASH
                : this.prev1 === BRACKET && this.prev2 === BRACKET)
          ) {
            this.state = TEXT;
            this.count = 0;
            break;
          }
          // A comment's text may not end in "-": the cut waits for a character after one.
          if (++this.count > max && this.mayCut(c) && (state !== COMMENT || this.last !== DASH)) {
            start = this.startDropping(text, start, i);
            continue;
          }
          this.prev2 = this.prev1;
          this.prev1 = c;
        }
      }
      this.last = c;
      i++;
    }
    if (start < n) {
      this.sink.keep(start === 0 ? text : text.slice(start));
    }
  }

  /** Counts `c` in a text or attribute value (an entity reference as one); false inside a reference. */
  private countChar(c: number): boolean {
    if (this.entity >= 0) {
      if (c === SEMI || ++this.entity > MAX_ENTITY_CHARS) {
        this.entity = -1;
      }
      return false;
    }
    if (c === AMP) {
      this.entity = 0;
    }
    this.count++;
    return true;
  }

  /** Not between the halves of a surrogate pair. */
  private mayCut(c: number): boolean {
    return (c & 0xfc00) !== 0xdc00;
  }

  private enter(state: number): void {
    this.state = state;
    this.count = 0;
    this.prev1 = this.prev2 = 0;
  }

  /** Passes on what was kept before `at`, and leaves the rest of the token out from `at`; the new start. */
  private startDropping(text: string, start: number, at: number): number {
    if (at > start) {
      this.sink.keep(text.slice(start, at));
    }
    this.dropping = true;
    this.entity = -1;
    this.sink.cut();
    return at;
  }

  /**
   * Where the token being left out ends in `text` from `from`: the `<` or quote that ends a text or attribute
   * value (a `<` in a value is passed on for the parser to refuse), the `>` of a `-->`, `]]>` or `?>`; -1 when
   * it goes on past `text`.
   */
  private dropEnd(text: string, from: number): number {
    switch (this.state) {
      case TEXT:
        return text.indexOf('<', from);
      case ATTR: {
        const quote = text.indexOf(this.quote === DQUOTE ? '"' : "'", from);
        const lt = text.indexOf('<', from);
        return quote === -1 ? lt : lt === -1 ? quote : Math.min(quote, lt);
      }
      default: {
        const state = this.state;
        for (let at = text.indexOf('>', from); at !== -1; at = text.indexOf('>', at + 1)) {
          const p1 = at - 1 >= from ? text.charCodeAt(at - 1) : this.prev1;
          const p2 = at - 2 >= from ? text.charCodeAt(at - 2) : at - 1 >= from ? this.prev1 : this.prev2;
          if (
            state === PI
              ? p1 === QUESTION
              : state === COMMENT
                ? p1 === DASH && p2 === DASH
                : p1 === BRACKET && p2 === BRACKET
          ) {
            return at;
          }
        }
        const n = text.length;
        if (n - from >= 2) {
          this.prev2 = text.charCodeAt(n - 2);
          this.prev1 = text.charCodeAt(n - 1);
        } else if (n - from === 1) {
          this.prev2 = this.prev1;
          this.prev1 = text.charCodeAt(n - 1);
        }
        return -1;
      }
    }
  }
}
