import type { ResultStatus } from '../../results/entities.js';
import { TRX_NAMESPACE } from './detect.js';
import { quote, splitQualifiedName, TextBuffer, timeSpanToMs } from './report-fields.js';
import { MAX_OUTPUT_CHARS, MAX_TEXT_CHARS, type ReportSink } from './report-parser.js';
import { XmlCaseParser } from './xml-base.parser.js';

function statusOf(outcome: string): ResultStatus | undefined {
  switch (outcome) {
    case 'Passed':
    case 'PassedButRunAborted':
    case 'Completed':
    case 'Warning':
      return 'PASSED';
    case 'Failed':
      return 'FAILED';
    case 'Error':
    case 'Timeout':
    case 'Aborted':
    case 'Disconnected':
    case 'NotRunnable':
      return 'BROKEN';
    case 'NotExecuted':
    case 'Inconclusive':
    case 'Pending':
    case 'InProgress':
      return 'SKIPPED';
    default:
      return undefined;
  }
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

/**
 * Visual Studio TRX (MSTest, VSTest, `dotnet test --logger trx`). Every direct child of <Results>
 * (UnitTestResult, TestResultAggregation for ordered tests, ...) is one result; the rows of a data-driven test
 * and the steps of an ordered test (<InnerResults>) are not results of their own.
 *
 * The test's class is in <TestDefinitions>, which Visual Studio writes after <Results>. Rather than hold every
 * result until then, the suite comes from the result's own testName where that is qualified
 * ("Ns.Class.Method", as the xUnit and NUnit adapters write it); MSTest's bare method names get no suite.
 */
export class TrxParser extends XmlCaseParser {
  /** Depth of <Results>, 0 outside it. */
  private resultsDepth = 0;
  /** Depth of the open result's <InnerResults>, 0 outside it. */
  private innerDepth = 0;
  private innerResults = 0;
  /** The open grandchild of the result (ErrorInfo, in the child Output). */
  private grandchild = '';
  private readonly message = new TextBuffer(MAX_TEXT_CHARS);
  private readonly stderr = new TextBuffer(MAX_OUTPUT_CHARS);

  constructor(sink: ReportSink) {
    super('trx', sink);
  }

  open(name: string, attributes: Record<string, string>, depth: number): void {
    const local = localName(name);
    if (depth === 1) {
      if (local !== 'TestRun') {
        this.xml.wrongRoot(name, attributes);
      }
      if (!Object.values(attributes).includes(TRX_NAMESPACE)) {
        this.out.warn(
          'namespace',
          `The TestRun element lacks the TRX namespace ${TRX_NAMESPACE}; read as TRX anyway`,
        );
      }
      return;
    }
    const caseDepth = this.caseDepth;
    if (caseDepth === 0) {
      if (this.resultsDepth === 0) {
        if (local === 'Results') {
          this.resultsDepth = depth;
        }
      } else if (depth === this.resultsDepth + 1) {
        this.startCase(attributes, depth);
      }
      return;
    }
    if (this.innerDepth !== 0) {
      if (depth === this.innerDepth + 1) {
        this.innerResults++;
      }
      return;
    }
    const relative = depth - caseDepth;
    if (relative === 1) {
      this.child = local;
      if (local === 'InnerResults') {
        this.innerDepth = depth;
      }
    } else if (relative === 2 && this.child === 'Output') {
      this.grandchild = local;
      if (local === 'StdOut') {
        this.captureInto(this.stdout, depth);
      } else if (local === 'StdErr') {
        this.captureInto(this.stderr, depth);
      }
    } else if (relative === 3 && this.grandchild === 'ErrorInfo') {
      if (local === 'Message') {
        this.captureInto(this.message, depth);
      } else if (local === 'StackTrace') {
        this.captureInto(this.trace, depth);
      }
    }
  }

  protected closed(_name: string, depth: number): void {
    if (this.caseDepth === 0) {
      if (depth === this.resultsDepth) {
        this.resultsDepth = 0;
      }
    } else if (depth === this.caseDepth) {
      this.finishCase();
    } else if (depth === this.innerDepth) {
      this.innerDepth = 0;
    } else if (this.innerDepth === 0) {
      if (depth === this.caseDepth + 1) {
        this.child = '';
      } else if (depth === this.caseDepth + 2) {
        this.grandchild = '';
      }
    }
  }

  protected override finish(): void {
    if (this.innerResults > 0) {
      this.out.warn(
        'innerResults',
        `${this.innerResults} inner results (rows of data-driven tests, steps of ordered tests) were not imported ` +
          'as tests of their own; the result that holds them was',
      );
    }
  }

  private startCase(attributes: Record<string, string>, depth: number): void {
    this.caseDepth = depth;
    const draft = this.draft;
    const testName = attributes.testName ?? '';
    const split = splitQualifiedName(testName);
    draft.name = split?.[1] ?? testName;
    draft.suite = split?.[0] ?? '';
    draft.durationMs = timeSpanToMs(attributes.duration);
    draft.startedAt = attributes.startTime ?? '';
    const outcome = attributes.outcome;
    if (outcome !== undefined) {
      draft.status = statusOf(outcome) ?? this.out.unknownStatus('TRX outcome', outcome, testName);
    } else {
      draft.status = 'BROKEN';
      this.out.warn('status:', `Test ${quote(testName)} has no outcome; imported as BROKEN`);
    }
  }

  protected finishCase(): void {
    const draft = this.draft;
    draft.message = this.message.take().trim();
    draft.trace = this.trace.take();
    draft.stderr = this.stderr.take();
    this.emitCase();
    this.grandchild = '';
  }
}
