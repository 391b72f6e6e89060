import type { ResultStatus } from '../../results/entities.js';
import { quote, TextBuffer } from './report-fields.js';
import { MAX_NAME_CHARS, MAX_TEXT_CHARS, type ReportSink } from './report-parser.js';
import { XmlCaseParser } from './xml-base.parser.js';

function statusOf(status: string): ResultStatus | undefined {
  switch (status) {
    case 'PASS':
      return 'PASSED';
    case 'FAIL':
      return 'FAILED';
    case 'SKIP':
      return 'SKIPPED';
    default:
      return undefined;
  }
}

/**
 * TestNG's testng-results.xml. Every <test-method> except configuration methods (is-config="true": @Before*,
 * @After*) is one result, its suite the enclosing <class>. Data-provider invocations are separate results, so
 * their parameters go into the name; attempts TestNG retried (retried="true") are results of their own, as
 * TestNG writes them.
 */
export class TestngParser extends XmlCaseParser {
  private className = '';
  private isConfig = false;
  private exceptionClass = '';
  private readonly message = new TextBuffer(MAX_TEXT_CHARS);
  private readonly param = new TextBuffer(MAX_NAME_CHARS);
  private params: string[] = [];
  private retried = false;
  /**
   * Tests with an attempt TestNG retried (`retried="true"`), by class and method, until the method's next element,
   * which is its next attempt (TestNG retries at once): the name of the first attempt (parameters printed by
   * Java's default toString differ between attempts, `C.M.TD@18d47df0`) and the attempts so far. Only tests with a
   * retried attempt not yet followed are held.
   */
  private readonly pendingRetries = new Map<string, { name: string; attempts: number }>();
  private method = '';
  private paramsChars = 0;
  private configs = 0;
  private configsNotPassed = 0;

  constructor(sink: ReportSink) {
    super('testng', sink);
  }

  open(name: string, attributes: Record<string, string>, depth: number): void {
    if (depth === 1 && name !== 'testng-results') {
      this.xml.wrongRoot(name, attributes);
    }
    const caseDepth = this.caseDepth;
    if (caseDepth === 0) {
      if (name === 'class') {
        this.className = attributes.name ?? '';
      } else if (name === 'test-method') {
        this.startCase(attributes, depth);
      }
      return;
    }
    if (this.isConfig) {
      return;
    }
    const relative = depth - caseDepth;
    if (relative === 1) {
      this.child = name;
      if (name === 'exception') {
        this.exceptionClass = attributes.class ?? '';
      }
    } else if (relative === 2) {
      if (this.child === 'exception') {
        if (name === 'message') {
          this.captureInto(this.message, depth);
        } else if (name === 'full-stacktrace') {
          this.captureInto(this.trace, depth);
        }
      } else if (this.child === 'reporter-output' && name === 'line') {
        this.captureInto(this.stdout, depth);
      } else if (this.child === 'params' && name === 'param') {
        this.param.take();
      }
    } else if (relative === 3 && this.child === 'params' && name === 'value') {
      if (attributes['is-null'] === 'true') {
        this.param.append('null');
      } else {
        this.captureInto(this.param, depth);
      }
    }
  }

  protected closed(name: string, depth: number): void {
    const relative = depth - this.caseDepth;
    if (this.caseDepth === 0) {
      return;
    }
    if (relative === 0) {
      if (this.isConfig) {
        this.isConfig = false;
        this.caseDepth = 0;
      } else {
        this.finishCase();
      }
    } else if (relative === 1) {
      this.child = '';
    } else if (relative === 2 && this.child === 'params' && name === 'param') {
      const value = this.param.take().trim();
      // Parameters beyond what a name can hold are left out (the emitter cuts the name anyway).
      if (this.paramsChars < MAX_NAME_CHARS) {
        this.params.push(value);
        this.paramsChars += value.length + 2;
      }
    } else if (relative === 2 && this.child === 'reporter-output' && name === 'line') {
      this.stdout.append('\n');
    }
  }

  protected override finish(): void {
    if (this.configsNotPassed > 0) {
      this.out.warn(
        'configs',
        `${this.configs} configuration methods (is-config="true": @BeforeClass, @AfterMethod ...) are not tests and ` +
          `were not imported; ${this.configsNotPassed} of them did not pass, which can explain skipped tests`,
      );
    }
  }

  private startCase(attributes: Record<string, string>, depth: number): void {
    this.caseDepth = depth;
    if (attributes['is-config'] === 'true') {
      this.isConfig = true;
      this.configs++;
      if (attributes.status !== 'PASS') {
        this.configsNotPassed++;
      }
      return;
    }
    const draft = this.draft;
    draft.name = attributes.name ?? '';
    this.method = draft.name;
    draft.suite = this.className;
    const status = attributes.status ?? '';
    draft.status = statusOf(status) ?? this.out.unknownStatus('TestNG status', status, draft.name);
    draft.durationMs = Number(attributes['duration-ms'] ?? NaN);
    draft.startedAt = attributes['started-at'] ?? '';
    this.retried = attributes.retried === 'true';
    if (this.retried) {
      draft.addAttribute('retried', 'true');
      this.out.warn(
        'retried',
        `Test ${quote(draft.name)} has an attempt TestNG retried (retried="true"); the attempts were imported as ` +
          'attempts of one test, its last one its outcome',
      );
    }
    const description = attributes.description;
    if (description !== undefined && description.length > 0) {
      draft.addAttribute('description', description);
    }
  }

  protected finishCase(): void {
    const draft = this.draft;
    if (this.params.length > 0) {
      draft.name = `${draft.name}(${this.params.join(', ')})`;
    }
    // Attempts of one test: a retried element and the one after it, under one name, numbered by `retry`.
    const key = `${draft.suite}\u0000${this.method}`;
    const pending = this.pendingRetries.get(key);
    if (pending) {
      draft.name = pending.name;
      draft.retry = pending.attempts;
    }
    if (this.retried) {
      this.pendingRetries.set(key, { name: draft.name, attempts: draft.retry + 1 });
    } else if (pending) {
      this.pendingRetries.delete(key);
    }
    const message = this.message.take().trim();
    if (message.length > 0 || this.exceptionClass.length > 0) {
      draft.message = message.length > 0 ? message : this.exceptionClass;
    }
    draft.trace = this.trace.take().trim();
    this.emitCase();
    this.exceptionClass = '';
    this.params = [];
    this.paramsChars = 0;
  }
}
