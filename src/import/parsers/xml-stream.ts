import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { StreamDecoder } from './decoding.js';
import { DETECT_HEAD_BYTES, detectFormat, formatOfXmlRoot } from './detect.js';
import { XmlTokenCutter } from './xml-cut.js';
import {
  MAX_DEPTH,
  MAX_ELEMENT_ATTRIBUTES,
  MAX_TOKEN_CHARS,
  ReportError,
  type ReportFormat,
} from './report-parser.js';

export interface XmlHandler {
  /** An element opened; `depth` is 1 for the root. */
  open(name: string, attributes: Record<string, string>, depth: number): void;
  /** An element closed (a self-closing one right after `open`); `depth` as it was in `open`. */
  close(name: string, depth: number): void;
  /** Character data, only while {@link XmlStream.capture} is on. */
  text(text: string): void;
}

/** saxes' own buffers, watched between pieces so that no single token grows without bound (see guard()). */
interface SaxesBuffers {
  text: string;
  name: string;
  entity: string;
}

/** saxes takes the text in pieces of this size, so its buffers are looked at this often. */
const PIECE_CHARS = 65_536;

/**
 * saxes' text buffer past this is cut (see guard()): XmlTokenCutter has already cut every token to
 * MAX_TOKEN_CHARS characters, of which an entity reference can stand for two code units.
 */
const MAX_BUFFER_CHARS = 2 * MAX_TOKEN_CHARS + 2;

/**
 * XML for report parsers: saxes, plus what it does not do for us. No DTD at all (so neither external entities
 * nor entity expansion bombs), nesting and attribute counts within the limits, every text, comment or attribute
 * value cut to MAX_TOKEN_CHARS as it streams in (XmlTokenCutter), bytes decoded by BOM or declared encoding, and
 * every problem a ReportError naming line and column (of the document as sent, whatever was cut before), or the
 * format the document really is.
 */
export class XmlStream {
  private depth = 0;
  private readonly sax = new SaxesParser({ xmlns: false, position: true });
  private readonly buffers: SaxesBuffers | undefined;
  private capturing = false;
  private attributeCount = 0;
  private rootSeen = false;

  private readonly decoder = new StreamDecoder();
  /** Before the first character: is this XML at all? */
  private started = false;
  /** Not XML: the start of it, kept to name what it is. */
  private misfit: string | undefined;
  /** The end of the previous piece, until the root opens: "<!DOCTYPE" may straddle two pieces. */
  private prologTail = '';

  private readonly cutter = new XmlTokenCutter(MAX_TOKEN_CHARS, {
    keep: (segment) => this.parse(segment),
    drop: (text, from, to) => this.dropped(text, from, to),
    cut: () =>
      this.warn(
        'token',
        `A text, comment or attribute value longer than ${MAX_TOKEN_CHARS} characters was cut`,
      ),
  });
  /** Lines left out by the cutter so far, which saxes' line numbers lack. */
  private lineShift = 0;
  /** Characters left out on saxes' line `shiftLine`, which its column numbers there lack (or over-count). */
  private columnShift = 0;
  private shiftLine = -1;

  private readonly onText = (text: string): void => this.handler.text(text);

  constructor(
    private readonly format: ReportFormat,
    private readonly handler: XmlHandler,
    private readonly warn: (kind: string, text: string) => void,
  ) {
    const sax = this.sax;
    const internals = sax as unknown as Partial<SaxesBuffers>;
    this.buffers =
      typeof internals.text === 'string' &&
      typeof internals.name === 'string' &&
      typeof internals.entity === 'string'
        ? (internals as SaxesBuffers)
        : undefined;

    sax.on('error', (error) => {
      // saxes prefixes "line:column: "; the message names them in words instead.
      const reason = error.message.replace(/^\d+:\d+: /, '');
      throw new ReportError('MALFORMED', `Not well-formed XML at ${this.position()}: ${reason}`);
    });
    sax.on('doctype', () => {
      throw new ReportError('MALFORMED', `DTDs are not accepted (at ${this.position()})`);
    });
    sax.on('attribute', () => {
      if (++this.attributeCount > MAX_ELEMENT_ATTRIBUTES) {
        throw new ReportError(
          'LIMIT',
          `An element has more than ${MAX_ELEMENT_ATTRIBUTES} attributes (at ${this.position()})`,
        );
      }
    });
    sax.on('opentag', (tag: SaxesTagPlain) => {
      this.attributeCount = 0;
      if (++this.depth > MAX_DEPTH) {
        throw new ReportError(
          'LIMIT',
          `Elements nested deeper than ${MAX_DEPTH} levels (at ${this.position()})`,
        );
      }
      if (this.depth === 1) {
        this.rootSeen = true;
        this.prologTail = '';
      }
      this.handler.open(tag.name, tag.attributes, this.depth);
    });
    sax.on('closetag', (tag: SaxesTagPlain) => {
      this.handler.close(tag.name, this.depth);
      this.depth--;
    });
    sax.on('cdata', (text) => {
      if (this.capturing) {
        this.handler.text(text);
      }
    });
  }

  /** Whether character data goes to the handler. Off, saxes does not even gather it. */
  get capture(): boolean {
    return this.capturing;
  }

  set capture(on: boolean) {
    if (on !== this.capturing) {
      this.capturing = on;
      if (on) {
        this.sax.on('text', this.onText);
      } else {
        this.sax.off('text');
      }
    }
  }

  write(chunk: Uint8Array | string): void {
    this.feed(typeof chunk === 'string' ? chunk : this.decode(chunk));
  }

  end(): void {
    const rest = this.decoder.end();
    this.noteEncoding();
    this.feed(rest);
    if (this.misfit !== undefined) {
      this.throwMisfit();
    }
    if (!this.started) {
      throw new ReportError('MALFORMED', 'The report is empty');
    }
    this.sax.close();
  }

  /** "line 3, column 7": where the parser is (for a tag, just after it). */
  position(): string {
    const { line, column } = this.sax;
    return `line ${line + this.lineShift}, column ${line === this.shiftLine ? column + this.columnShift : column}`;
  }

  /** Refuses a root element that is not the format's; names the format it belongs to if it is a report. */
  wrongRoot(name: string, attributes: Record<string, string>): never {
    let detected = formatOfXmlRoot(name);
    if (detected === 'trx' && attributes.xmlns === undefined) {
      detected = undefined;
    }
    throw new ReportError(
      'WRONG_FORMAT',
      detected !== undefined && detected !== this.format
        ? `This looks like a ${detected} report, not ${this.format}`
        : `This is not a ${this.format} report: its root element is <${name}>`,
    );
  }

  private decode(chunk: Uint8Array): string {
    const text = this.decoder.write(chunk);
    this.noteEncoding();
    return text;
  }

  private noteEncoding(): void {
    if (this.decoder.warning !== undefined) {
      this.warn('encoding', this.decoder.warning);
      this.decoder.warning = undefined;
    }
  }

  private feed(text: string): void {
    if (text.length === 0) {
      return;
    }
    if (this.misfit !== undefined) {
      this.misfit += text.slice(0, DETECT_HEAD_BYTES - this.misfit.length);
      if (this.misfit.length >= DETECT_HEAD_BYTES) {
        this.throwMisfit();
      }
      return;
    }
    if (!this.started) {
      let i = 0;
      while (i < text.length && (text.charCodeAt(i) <= 0x20 || text.charCodeAt(i) === 0xfeff)) {
        i++;
      }
      if (i === text.length) {
        return; // only white space so far: saxes need not see it before the prolog
      }
      this.started = true;
      if (text.charCodeAt(i) !== 0x3c) {
        this.misfit = '';
        this.feed(text.slice(i));
        return;
      }
      text = text.slice(i);
    }
    this.cutter.write(text);
  }

  /** Text the cutter passed on, to saxes in pieces (see guard()). */
  private parse(text: string): void {
    for (let start = 0; start < text.length; start += PIECE_CHARS) {
      const piece = start === 0 && text.length <= PIECE_CHARS ? text : text.slice(start, start + PIECE_CHARS);
      if (!this.rootSeen) {
        this.refuseDoctype(piece);
      }
      this.sax.write(piece);
      this.guard();
    }
  }

  /** Keeps the positions in errors those of the document as sent: saxes never saw what the cutter left out. */
  private dropped(text: string, from: number, to: number): void {
    let newlines = 0;
    let lastNewline = -1;
    for (let at = text.indexOf('\n', from); at !== -1 && at < to; at = text.indexOf('\n', at + 1)) {
      newlines++;
      lastNewline = at;
    }
    const { line, column } = this.sax;
    if (newlines > 0) {
      this.lineShift += newlines;
      this.columnShift = to - lastNewline - 1 - column;
    } else {
      if (this.shiftLine !== line) {
        this.columnShift = 0;
      }
      this.columnShift += to - from;
    }
    this.shiftLine = line;
  }

  /**
   * saxes reports a doctype only once all of it is read; refusing it at its first bytes spares reading a huge
   * internal subset. Only the prolog is searched: "<!DOCTYPE" inside a failure message is just text.
   */
  private refuseDoctype(piece: string): void {
    const window = this.prologTail + piece;
    let root = window.length;
    for (
      let at = window.indexOf('<');
      at !== -1 && at + 1 < window.length;
      at = window.indexOf('<', at + 1)
    ) {
      const next = window.charCodeAt(at + 1);
      if (next !== 0x3f && next !== 0x21) {
        root = at;
        break;
      }
    }
    const doctype = window.indexOf('<!DOCTYPE');
    if (doctype !== -1 && doctype < root) {
      throw new ReportError('MALFORMED', 'DTDs are not accepted: the report has a <!DOCTYPE> declaration');
    }
    this.prologTail = window.slice(-8);
  }

  /**
   * Refuses names and entity references longer than MAX_TOKEN_CHARS (between two pieces no token can grow by
   * more than one piece), and cuts saxes' text buffer should anything the cutter does not know of (an unquoted
   * attribute value, an XML declaration) grow past MAX_BUFFER_CHARS.
   */
  private guard(): void {
    const buffers = this.buffers;
    if (buffers === undefined) {
      return;
    }
    if (buffers.text.length > MAX_BUFFER_CHARS) {
      buffers.text = buffers.text.slice(0, MAX_BUFFER_CHARS);
      this.warn(
        'token',
        `A text, comment or attribute value longer than ${MAX_TOKEN_CHARS} characters was cut`,
      );
    }
    if (buffers.name.length > MAX_TOKEN_CHARS || buffers.entity.length > MAX_TOKEN_CHARS) {
      throw new ReportError(
        'LIMIT',
        `A name longer than ${MAX_TOKEN_CHARS} characters (at ${this.position()})`,
      );
    }
  }

  private throwMisfit(): never {
    const detected = detectFormat(this.misfit ?? '');
    throw new ReportError(
      detected !== undefined ? 'WRONG_FORMAT' : 'MALFORMED',
      detected !== undefined && detected !== this.format
        ? `This looks like a ${detected} report, not ${this.format}`
        : `This is not an XML document, so not a ${this.format} report`,
    );
  }
}
