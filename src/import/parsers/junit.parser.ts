import { firstLine, quote, secondsToMs, TextBuffer } from './report-fields.js';
import { MAX_OUTPUT_CHARS, MAX_TEXT_CHARS, type ReportSink } from './report-parser.js';
import { XmlBaseParser } from './xml-base.parser.js';

/**
 * JUnit XML in its flavours (Ant, Surefire/Failsafe, Gradle, pytest, Jest, Mocha, Go, PHPUnit, .NET loggers,
 * cargo-nextest, ...). Every <testcase> anywhere is one result; its status is the worst of its direct children:
 * <error> BROKEN, <failure> FAILED, <skipped> SKIPPED, none PASSED. Surefire's flaky and rerun elements leave
 * the status as it is: each is an earlier attempt of the test (FAILED, or BROKEN for an error), written before it
 * with retries 0, 1, …, and the test's own result is its last attempt (a flaky-only test: passed on retry).
 */
export class JunitParser extends XmlBaseParser {
  /** Enclosing <testsuite> names and timestamps, innermost last. */
  private readonly suites: string[] = [];
  private readonly suiteStamps: string[] = [];
  /** Test cases seen in each enclosing <testsuite>, innermost last. */
  private readonly suiteCases: number[] = [];
  private readonly suiteDepths: number[] = [];
  /**
   * An <error> or <failure> directly in a <testsuite> (a failed class setup, a collection error), until that
   * suite closes: a suite without any test case is then reported as one BROKEN test named after it, as CI servers
   * show it.
   */
  private suiteError: { depth: number; message: string; type: string } | undefined;
  private readonly suiteErrorText = new TextBuffer(MAX_TEXT_CHARS);

  /** Depth of the open <testcase>, 0 outside one. */
  private caseDepth = 0;
  private caseName = '';
  private className = '';
  private time = '';
  private stamp = '';
  private hasError = false;
  private hasFailure = false;
  private hasSkipped = false;
  private errorMessage = '';
  private errorType = '';
  private failureMessage = '';
  private failureType = '';
  private skippedMessage = '';
  private readonly errorText = new TextBuffer(MAX_TEXT_CHARS);
  private readonly failureText = new TextBuffer(MAX_TEXT_CHARS);
  private readonly skippedText = new TextBuffer(MAX_TEXT_CHARS);
  private readonly stdout = new TextBuffer(MAX_OUTPUT_CHARS);
  private readonly stderr = new TextBuffer(MAX_OUTPUT_CHARS);
  /** The test case's Surefire flaky and rerun elements, in order: its earlier attempts. */
  private readonly reruns: { status: 'FAILED' | 'BROKEN'; message: string }[] = [];

  constructor(sink: ReportSink) {
    super('junit', sink);
  }

  open(name: string, attributes: Record<string, string>, depth: number): void {
    if (depth === 1 && name !== 'testsuites' && name !== 'testsuite') {
      this.xml.wrongRoot(name, attributes);
    }
    const caseDepth = this.caseDepth;
    if (caseDepth === 0) {
      if (name === 'testcase') {
        this.startCase(attributes, depth);
      } else if (name === 'testsuite') {
        this.suites.push(attributes.name ?? '');
        this.suiteStamps.push(attributes.timestamp ?? '');
        this.suiteCases.push(0);
        this.suiteDepths.push(depth);
      } else if ((name === 'error' || name === 'failure') && depth === (this.suiteDepths.at(-1) ?? -1) + 1) {
        if (this.suiteError === undefined) {
          this.suiteError = {
            depth: depth - 1,
            message: attributes.message ?? '',
            type: attributes.type ?? '',
          };
          this.captureInto(this.suiteErrorText, depth);
        }
      }
      return;
    }
    if (depth === caseDepth + 1) {
      switch (name) {
        case 'error':
          if (!this.hasError) {
            this.hasError = true;
            this.errorMessage = attributes.message ?? '';
            this.errorType = attributes.type ?? '';
            this.captureInto(this.errorText, depth);
          }
          break;
        case 'failure':
          if (!this.hasFailure) {
            this.hasFailure = true;
            this.failureMessage = attributes.message ?? '';
            this.failureType = attributes.type ?? '';
            this.captureInto(this.failureText, depth);
          }
          break;
        case 'skipped':
          if (!this.hasSkipped) {
            this.hasSkipped = true;
            this.skippedMessage = attributes.message ?? '';
            this.captureInto(this.skippedText, depth);
          }
          break;
        case 'system-out':
          this.captureInto(this.stdout, depth);
          break;
        case 'system-err':
          this.captureInto(this.stderr, depth);
          break;
        case 'flakyFailure':
        case 'rerunFailure':
        case 'flakyError':
        case 'rerunError':
          this.reruns.push({
            status: name.endsWith('Error') ? 'BROKEN' : 'FAILED',
            message: attributes.message ?? attributes.type ?? '',
          });
          break;
        case 'warning':
          this.out.warn(
            'phpunitWarning',
            `Test ${quote(this.caseName)} has a PHPUnit <warning>; imported as passed`,
          );
          break;
      }
    } else if (depth === caseDepth + 2 && name === 'property') {
      const key = attributes.name;
      if (key !== undefined) {
        this.draft.addAttribute(key, attributes.value ?? '');
      }
    }
  }

  protected closed(name: string, depth: number): void {
    if (this.caseDepth === depth) {
      this.finishCase();
    } else if (this.caseDepth === 0 && name === 'testsuite') {
      this.closeSuite(depth);
    }
  }

  /** A suite's end: its suite-level error, if any, reported (see suiteError). */
  private closeSuite(depth: number): void {
    const suite = this.suites[this.suites.length - 1];
    const cases = this.suiteCases[this.suiteCases.length - 1];
    const error = this.suiteError;
    if (error !== undefined && error.depth === depth) {
      this.suiteError = undefined;
      const text = this.suiteErrorText.take();
      if (cases > 0) {
        this.out.warn(
          'suiteError',
          `Test suite ${quote(suite)} has an <error> or <failure> outside any <testcase> (such as a failed class ` +
            'setup) beside its test cases; it is not a test and was not imported',
        );
      } else {
        const draft = this.draft;
        draft.name = suite;
        draft.suite = suite;
        draft.status = 'BROKEN';
        draft.startedAt = this.suiteStamps[this.suiteStamps.length - 1];
        this.describe(error.message, error.type, text);
        this.out.warn(
          'suiteErrorAsTest',
          `Test suite ${quote(suite)} has no test case but an error (such as a failed class setup or collection); ` +
            'it was imported as one BROKEN test named after the suite',
        );
        this.out.emit(draft);
        draft.reset();
        this.countCase();
      }
    }
    this.suites.pop();
    this.suiteStamps.pop();
    this.suiteCases.pop();
    this.suiteDepths.pop();
  }

  /** One more test case in every enclosing suite. */
  private countCase(): void {
    for (let i = 0; i < this.suiteCases.length; i++) {
      this.suiteCases[i]++;
    }
  }

  private startCase(attributes: Record<string, string>, depth: number): void {
    this.countCase();
    this.caseDepth = depth;
    this.caseName = attributes.name ?? '';
    this.className = attributes.classname ?? '';
    this.time = attributes.time ?? '';
    this.stamp = attributes.timestamp ?? '';
    const file = attributes.file;
    if (file !== undefined && file.length > 0) {
      this.draft.addAttribute('file', file);
    }
  }

  private finishCase(): void {
    const draft = this.draft;
    const suites = this.suites;
    const name = this.caseName;
    const className = this.className;
    draft.name = name.length > 0 ? name : className;
    // The class is the suite where there is one (Java, Python, .NET, Go's package). jest-junit and
    // mocha-junit-reporter put the test's own title there (the whole name, or its end), and k6 nothing: then
    // the innermost <testsuite> is the suite.
    const classIsTitle =
      className.length === 0 ||
      className === name ||
      (name.length > className.length &&
        name.endsWith(className) &&
        name[name.length - className.length - 1] === ' ');
    draft.suite = !classIsTitle ? className : suites.length > 0 ? suites[suites.length - 1] : className;
    draft.durationMs = secondsToMs(this.time);
    draft.startedAt =
      this.stamp.length > 0 ? this.stamp : suites.length > 0 ? this.suiteStamps[suites.length - 1] : '';

    if (this.hasError) {
      draft.status = 'BROKEN';
      this.describe(this.errorMessage, this.errorType, this.errorText.take());
    } else if (this.hasFailure) {
      draft.status = 'FAILED';
      this.describe(this.failureMessage, this.failureType, this.failureText.take());
    } else if (this.hasSkipped) {
      draft.status = 'SKIPPED';
      const text = this.skippedText.take();
      draft.message = this.skippedMessage.length > 0 ? this.skippedMessage : firstLine(text);
    }
    draft.stdout = this.stdout.take();
    draft.stderr = this.stderr.take();
    if (this.reruns.length > 0) {
      // Each rerun element an earlier attempt; the test case's own result the last.
      this.out.emitAttempts(draft, this.reruns);
      draft.retry = this.reruns.length;
    }
    this.out.emit(draft);

    draft.reset();
    this.errorText.take();
    this.failureText.take();
    this.skippedText.take();
    this.caseDepth = 0;
    this.hasError = false;
    this.hasFailure = false;
    this.hasSkipped = false;
    this.errorMessage = '';
    this.errorType = '';
    this.failureMessage = '';
    this.failureType = '';
    this.skippedMessage = '';
    this.reruns.length = 0;
  }

  /** The message attribute, else the first line of the text (Jest writes only text), else the exception type. */
  private describe(message: string, type: string, text: string): void {
    const draft = this.draft;
    draft.message = message.length > 0 ? message : text.length > 0 ? firstLine(text) : type;
    draft.trace = text;
  }
}
