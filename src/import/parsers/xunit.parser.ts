import type { ResultStatus } from '../../results/entities.js';
import { quote, secondsToMs, TextBuffer } from './report-fields.js';
import { MAX_TEXT_CHARS, type ReportSink } from './report-parser.js';
import { XmlCaseParser } from './xml-base.parser.js';

/** xUnit.net has no error/failure distinction: a test fails or it does not. */
function statusOf(result: string): ResultStatus | undefined {
  switch (result) {
    case 'Pass':
      return 'PASSED';
    case 'Fail':
      return 'FAILED';
    case 'Skip':
    case 'NotRun':
      return 'SKIPPED';
    default:
      return undefined;
  }
}

/**
 * xUnit.net XML: v2 (<assemblies>, and v3's, which is the same) and the legacy v1 (<assembly>, with <class>
 * where v2 has <collection>). Every <test> is one result; its suite is the test's class (`type`).
 */
export class XunitParser extends XmlCaseParser {
  /** The enclosing <collection> (v2) or <class> (v1). */
  private collection = '';
  private exceptionType = '';
  private readonly failureMessage = new TextBuffer(MAX_TEXT_CHARS);
  private readonly reason = new TextBuffer(MAX_TEXT_CHARS);
  private inErrors = false;

  constructor(sink: ReportSink) {
    super('xunit', sink);
  }

  open(name: string, attributes: Record<string, string>, depth: number): void {
    if (depth === 1 && name !== 'assemblies' && name !== 'assembly') {
      this.xml.wrongRoot(name, attributes);
    }
    const caseDepth = this.caseDepth;
    if (caseDepth === 0) {
      switch (name) {
        case 'test':
          this.startCase(attributes, depth);
          break;
        case 'collection':
        case 'class':
          this.collection = attributes.name ?? '';
          break;
        case 'errors':
          this.inErrors = true;
          break;
        case 'error':
          if (this.inErrors) {
            this.out.warn(
              'assemblyError',
              `The report lists an error outside any test (${attributes.type ?? 'error'} ` +
                `${quote(attributes.name ?? '')}, such as a failed fixture cleanup); it was not imported`,
            );
          }
          break;
      }
      return;
    }
    const relative = depth - caseDepth;
    if (relative === 1) {
      this.child = name;
      switch (name) {
        case 'failure':
          this.exceptionType = attributes['exception-type'] ?? '';
          break;
        case 'reason':
          // v2 writes the reason as text; v1 wraps it in <message>, which this takes in as well.
          this.captureInto(this.reason, depth);
          break;
        case 'output':
          this.captureInto(this.stdout, depth);
          break;
      }
    } else if (relative === 2) {
      if (this.child === 'failure') {
        if (name === 'message') {
          this.captureInto(this.failureMessage, depth);
        } else if (name === 'stack-trace') {
          this.captureInto(this.trace, depth);
        }
      } else if (this.child === 'traits' && name === 'trait' && attributes.name !== undefined) {
        this.draft.addAttribute(attributes.name, attributes.value ?? '');
      }
    }
  }

  protected closed(name: string, depth: number): void {
    if (this.caseDepth !== 0) {
      this.closedInCase(depth);
    } else if (name === 'errors') {
      this.inErrors = false;
    }
  }

  private startCase(attributes: Record<string, string>, depth: number): void {
    this.caseDepth = depth;
    const draft = this.draft;
    const type = attributes.type ?? '';
    let name = attributes.name ?? '';
    // The default display name repeats the class: "Ns.Class.Method(x: 1)". The class is the suite already.
    if (
      type.length > 0 &&
      name.length > type.length + 1 &&
      name.startsWith(type) &&
      name[type.length] === '.'
    ) {
      name = name.slice(type.length + 1);
    }
    draft.name = name;
    draft.suite = type.length > 0 ? type : this.collection;
    draft.durationMs = secondsToMs(attributes.time);
    draft.startedAt = attributes['start-rtf'] ?? '';
    const result = attributes.result ?? '';
    draft.status = statusOf(result) ?? this.out.unknownStatus('xUnit result', result, name);
  }

  protected finishCase(): void {
    const draft = this.draft;
    const failure = this.failureMessage.take().trim();
    const reason = this.reason.take().trim();
    draft.message = failure.length > 0 ? failure : draft.status === 'FAILED' ? this.exceptionType : reason;
    draft.trace = this.trace.take();
    this.emitCase();
    this.exceptionType = '';
  }
}
