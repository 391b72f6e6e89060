import type { ResultStatus } from '../../results/entities.js';
import { secondsToMs, splitQualifiedName, TextBuffer } from './report-fields.js';
import { MAX_TEXT_CHARS, type ReportSink } from './report-parser.js';
import { XmlCaseParser } from './xml-base.parser.js';

/** NUnit 2 `result`: Success, Failure, Error, NotRunnable/Cancelled, Ignored/Skipped/Inconclusive. */
function nunit2Status(result: string): ResultStatus | undefined {
  switch (result) {
    case 'Success':
      return 'PASSED';
    case 'Failure':
      return 'FAILED';
    case 'Error':
    case 'NotRunnable':
    case 'Cancelled':
      return 'BROKEN';
    case 'Ignored':
    case 'Skipped':
    case 'Inconclusive':
      return 'SKIPPED';
    default:
      return undefined;
  }
}

/** NUnit 3 `result` with its `label`: a Failed test labelled Error, Invalid or Cancelled did not run properly. */
function nunit3Status(result: string, label: string | undefined): ResultStatus | undefined {
  switch (result) {
    case 'Passed':
    case 'Warning':
      return 'PASSED';
    case 'Failed':
      return label === 'Error' || label === 'Invalid' || label === 'Cancelled' ? 'BROKEN' : 'FAILED';
    case 'Skipped':
    case 'Inconclusive':
      return 'SKIPPED';
    default:
      return undefined;
  }
}

/**
 * NUnit 2 (<test-results>) and NUnit 3 (<test-run>) result files. Every <test-case> is one result; its suite is
 * the test's class.
 */
export class NunitParser extends XmlCaseParser {
  private version: 2 | 3 = 3;
  /** Enclosing <test-suite> full names (NUnit 2: names), innermost last. */
  private readonly suites: string[] = [];
  private result = '';
  private readonly failureMessage = new TextBuffer(MAX_TEXT_CHARS);
  private readonly reasonMessage = new TextBuffer(MAX_TEXT_CHARS);

  constructor(sink: ReportSink) {
    super('nunit', sink);
  }

  open(name: string, attributes: Record<string, string>, depth: number): void {
    if (depth === 1) {
      if (name === 'test-results') {
        this.version = 2;
      } else if (name !== 'test-run') {
        this.xml.wrongRoot(name, attributes);
      }
    }
    const caseDepth = this.caseDepth;
    if (caseDepth === 0) {
      if (name === 'test-case') {
        this.startCase(attributes, depth);
      } else if (name === 'test-suite') {
        this.suites.push(attributes.fullname ?? attributes.name ?? '');
      }
      return;
    }
    const relative = depth - caseDepth;
    if (relative === 1) {
      this.child = name;
      if (name === 'output') {
        this.captureInto(this.stdout, depth);
      }
    } else if (relative === 2) {
      switch (this.child) {
        case 'failure':
          if (name === 'message') {
            this.captureInto(this.failureMessage, depth);
          } else if (name === 'stack-trace') {
            this.captureInto(this.trace, depth);
          }
          break;
        case 'reason':
          if (name === 'message') {
            this.captureInto(this.reasonMessage, depth);
          }
          break;
        case 'properties': {
          const key = attributes.name;
          // Names starting with "_" are NUnit's own (_PID, _SKIPREASON, _JOINTYPE ...).
          if (name === 'property' && key !== undefined && !key.startsWith('_')) {
            this.draft.addAttribute(key, attributes.value ?? '');
          }
          break;
        }
        case 'categories':
          if (name === 'category' && attributes.name !== undefined) {
            this.draft.addAttribute('Category', attributes.name);
          }
          break;
      }
    }
  }

  protected closed(name: string, depth: number): void {
    if (this.caseDepth !== 0) {
      this.closedInCase(depth);
    } else if (name === 'test-suite') {
      this.suites.pop();
    }
  }

  private startCase(attributes: Record<string, string>, depth: number): void {
    this.caseDepth = depth;
    const draft = this.draft;
    const suites = this.suites;
    const fallbackSuite = suites.length > 0 ? suites[suites.length - 1] : '';
    const name = attributes.name ?? '';
    this.result = attributes.result ?? '';
    if (this.version === 3) {
      draft.name = name;
      draft.suite =
        attributes.classname ?? splitQualifiedName(attributes.fullname ?? '')?.[0] ?? fallbackSuite;
      draft.durationMs = secondsToMs(attributes.duration);
      draft.startedAt = attributes['start-time'] ?? '';
      draft.status = nunit3Status(this.result, attributes.label) ?? this.unknownStatus(name);
    } else {
      // NUnit 2 names a test by its full name: Namespace.Class.Method(arguments).
      const split = splitQualifiedName(name);
      draft.name = split?.[1] ?? name;
      draft.suite = split?.[0] ?? fallbackSuite;
      draft.durationMs = secondsToMs(attributes.time);
      if (attributes.result !== undefined) {
        draft.status = nunit2Status(this.result) ?? this.unknownStatus(name);
      } else {
        // NUnit 2.2 and earlier: no result, only executed and success.
        draft.status =
          attributes.executed === 'False' ? 'SKIPPED' : attributes.success === 'True' ? 'PASSED' : 'FAILED';
      }
    }
  }

  private unknownStatus(name: string): ResultStatus {
    return this.out.unknownStatus('NUnit result', this.result, name);
  }

  protected finishCase(): void {
    const draft = this.draft;
    const failure = this.failureMessage.take().trim();
    const reason = this.reasonMessage.take().trim();
    // A passed test's reason is NUnit's "Success" or nothing; a warning's reason is the warning.
    draft.message =
      failure.length > 0 ? failure : draft.status !== 'PASSED' || this.result === 'Warning' ? reason : '';
    draft.trace = this.trace.take();
    this.emitCase();
  }
}
