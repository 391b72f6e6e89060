import type { TextBuffer } from './report-fields.js';
import { ResultDraft, ResultEmitter } from './result-emitter.js';
import type { ReportFormat, ReportParser, ReportSink } from './report-parser.js';
import { XmlStream, type XmlHandler } from './xml-stream.js';

/**
 * What the XML formats share: the safe XML stream, the emitter, one result draft reused per test, and text
 * capture into a bounded buffer for the duration of one element.
 */
export abstract class XmlBaseParser implements ReportParser, XmlHandler {
  protected readonly out: ResultEmitter;
  protected readonly xml: XmlStream;
  protected readonly draft = new ResultDraft();
  private target: TextBuffer | undefined;
  private targetDepth = 0;
  /** What a write or the end threw: the state after it is undefined, so every later call throws it again. */
  private failure: Error | undefined;

  constructor(
    readonly format: ReportFormat,
    sink: ReportSink,
  ) {
    this.out = new ResultEmitter(sink, false);
    this.xml = new XmlStream(format, this, (kind, text) => this.out.warn(kind, text));
  }

  write(chunk: Uint8Array | string): void {
    if (this.failure !== undefined) {
      throw this.failure;
    }
    try {
      this.xml.write(chunk);
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
  }

  end(): void {
    if (this.failure !== undefined) {
      throw this.failure;
    }
    try {
      this.xml.end();
      this.finish();
    } catch (error) {
      this.failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    }
    this.out.finish();
  }

  abstract open(name: string, attributes: Record<string, string>, depth: number): void;

  /** The element at `depth` closed; capture into a buffer has already stopped if it was this element. */
  protected abstract closed(name: string, depth: number): void;

  /** The document is complete: warnings that need the whole report. */
  protected finish(): void {}

  close(name: string, depth: number): void {
    if (this.target !== undefined && depth === this.targetDepth) {
      this.target = undefined;
      this.xml.capture = false;
    }
    this.closed(name, depth);
  }

  text(text: string): void {
    this.target?.append(text);
  }

  /** Collects the character data inside the element opened at `depth` (its descendants' included) into `buffer`. */
  protected captureInto(buffer: TextBuffer, depth: number): void {
    this.target = buffer;
    this.targetDepth = depth;
    this.xml.capture = true;
  }
}
