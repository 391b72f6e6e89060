import { StreamDecoder } from './decoding.js';
import { DETECT_HEAD_BYTES, detectFormat } from './detect.js';
import {
  JsonStream,
  type JsonHandler,
  type JsonKind,
  type JsonPath,
  type JsonStreamOptions,
  type JsonValue,
} from './json-stream.js';
import { ResultEmitter } from './result-emitter.js';
import {
  ReportError,
  StickyFailure,
  type ReportFormat,
  type ReportParser,
  type ReportSink,
} from './report-parser.js';

/**
 * What the JSON formats share: decoding, the streaming JSON reader, the emitter, and telling a report of
 * another format (XML, or JSON of the other shape) from a broken one.
 */
export abstract class JsonBaseParser implements ReportParser, JsonHandler {
  protected readonly out: ResultEmitter;
  private readonly json: JsonStream;
  private readonly decoder = new StreamDecoder();
  /** The first DETECT_HEAD_BYTES characters, to name the format of a report that is not ours. */
  private probe = '';
  private started = false;
  private notJson = false;
  private wrongShape = false;
  private readonly failure = new StickyFailure();

  constructor(
    readonly format: ReportFormat,
    sink: ReportSink,
    options: JsonStreamOptions,
  ) {
    this.out = new ResultEmitter(sink, true);
    this.json = new JsonStream(this, options);
  }

  abstract select(path: JsonPath, kind: JsonKind): 'collect' | 'descend' | 'skip';
  abstract value(path: JsonPath, value: JsonValue): void;

  write(chunk: Uint8Array | string): void {
    this.failure.run(() => {
      if (typeof chunk === 'string') {
        this.feed(chunk);
      } else {
        const text = this.decoder.write(chunk);
        this.noteEncoding();
        this.feed(text);
      }
    });
  }

  end(): void {
    this.failure.run(() => {
      const rest = this.decoder.end();
      this.noteEncoding();
      this.feed(rest);
      if (this.notJson || this.wrongShape) {
        this.throwWrongFormat();
      }
      if (!this.started) {
        throw new ReportError('MALFORMED', 'The report is empty');
      }
      this.json.end();
      this.finish();
    });
    this.out.finish();
  }

  /** The document is complete: checks and warnings that need all of it. */
  protected finish(): void {}

  /** The root (or another required part) is not what this format has: once the probe is full, say what it is. */
  protected rejectShape(): void {
    this.wrongShape = true;
  }

  protected throwWrongFormat(): never {
    const detected = detectFormat(this.probe);
    if (detected !== undefined && detected !== this.format) {
      throw new ReportError('WRONG_FORMAT', `This looks like a ${detected} report, not ${this.format}`);
    }
    throw new ReportError(
      this.notJson ? 'MALFORMED' : 'WRONG_FORMAT',
      this.notJson
        ? `This is not a JSON document, so not a ${this.format} report`
        : `This is not a ${this.format} report: ${this.shapeHint()}`,
    );
  }

  /** What the format's JSON looks like, for the message refusing a document that does not. */
  protected abstract shapeHint(): string;

  private feed(text: string): void {
    if (text.length === 0) {
      return;
    }
    if (this.probe.length < DETECT_HEAD_BYTES) {
      this.probe += text.slice(0, DETECT_HEAD_BYTES - this.probe.length);
    }
    if (!this.started) {
      let i = 0;
      while (i < text.length && (text.charCodeAt(i) <= 0x20 || text.charCodeAt(i) === 0xfeff)) {
        i++;
      }
      if (i === text.length) {
        return;
      }
      this.started = true;
      this.notJson = text.charCodeAt(i) === 0x3c;
      text = text.slice(i);
    }
    if (!this.notJson) {
      this.json.write(text);
    }
    if ((this.notJson || this.wrongShape) && this.probe.length >= DETECT_HEAD_BYTES) {
      this.throwWrongFormat();
    }
  }

  private noteEncoding(): void {
    if (this.decoder.warning !== undefined) {
      this.out.warn('encoding', this.decoder.warning);
      this.decoder.warning = undefined;
    }
  }
}
