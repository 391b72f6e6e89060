import { TextBuffer } from './report-fields.js';
import { ResultDraft, ResultEmitter } from './result-emitter.js';
import {
  MAX_OUTPUT_CHARS,
  MAX_TEXT_CHARS,
  StickyFailure,
  type ReportFormat,
  type ReportParser,
  type ReportSink,
} from './report-parser.js';
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
  private readonly failure = new StickyFailure();

  constructor(
    readonly format: ReportFormat,
    sink: ReportSink,
  ) {
    this.out = new ResultEmitter(sink, false);
    this.xml = new XmlStream(format, this, (kind, text) => this.out.warn(kind, text));
  }

  write(chunk: Uint8Array | string): void {
    this.failure.run(() => this.xml.write(chunk));
  }

  end(): void {
    this.failure.run(() => {
      this.xml.end();
      this.finish();
    });
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

/**
 * The XML formats whose every test is one element with children of its own (NUnit, xUnit.net, TestNG, TRX):
 * where that element is open, which of its direct children is, and the stack trace and output collected in it.
 */
export abstract class XmlCaseParser extends XmlBaseParser {
  /** Depth of the open test element, 0 outside one. */
  protected caseDepth = 0;
  /** The open direct child of the test element, '' when there is none. */
  protected child = '';
  protected readonly trace = new TextBuffer(MAX_TEXT_CHARS);
  protected readonly stdout = new TextBuffer(MAX_OUTPUT_CHARS);

  /** The test element closed: completes the draft and hands it on (through emitCase). */
  protected abstract finishCase(): void;

  /** An element inside the open test closed: the test element itself finishes the test, a direct child ends. */
  protected closedInCase(depth: number): void {
    if (depth === this.caseDepth) {
      this.finishCase();
    } else if (depth === this.caseDepth + 1) {
      this.child = '';
    }
  }

  /** Hands on the draft with the test's output, then readies the draft and the case state for the next test. */
  protected emitCase(): void {
    const draft = this.draft;
    draft.stdout = this.stdout.take();
    this.out.emit(draft);
    draft.reset();
    this.caseDepth = 0;
    this.child = '';
  }
}
