import type { ResultStatus } from '../../results/entities.js';
import { JsonBaseParser } from './json-base.parser.js';
import type { JsonKind, JsonPath, JsonValue } from './json-stream.js';
import { quote } from './report-fields.js';
import { type EarlierAttempt, ResultDraft } from './result-emitter.js';
import { MAX_RETRY, MAX_TEXT_CHARS, ReportError, type ReportSink } from './report-parser.js';

/** The most retries of one test written as attempts. */
const MAX_WRITTEN_RETRIES = 20;

/** Members of a test read over rather than kept: large, and nothing the import stores. */
const SKIPPED_MEMBERS = new Set([
  'attachments',
  'steps',
  'insights',
  'ai',
  'extra',
  'screenshot',
  'snippet',
  'parameters',
]);

/** Scalar members of a test kept as attributes. */
const ATTRIBUTE_MEMBERS = ['type', 'filePath', 'line', 'browser', 'device', 'flaky'];

type JsonObject = { [key: string]: JsonValue };

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: JsonValue | undefined): string {
  return typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : '';
}

/** A label's value as attribute text: scalars as written, arrays of them comma-separated. */
function labelText(value: JsonValue): string | undefined {
  if (Array.isArray(value)) {
    return value
      .map((item) => (isObject(item) || Array.isArray(item) ? JSON.stringify(item) : text(item)))
      .join(', ');
  }
  return isObject(value) ? JSON.stringify(value) : value === null ? undefined : text(value);
}

function statusOf(status: string): ResultStatus | undefined {
  switch (status) {
    case 'passed':
      return 'PASSED';
    case 'failed':
      return 'FAILED';
    case 'skipped':
    case 'pending':
      return 'SKIPPED';
    case 'other':
      return 'BROKEN';
    default:
      return undefined;
  }
}

/**
 * CTRF (Common Test Report Format) JSON: every entry of `results.tests` is one test. Only those entries are
 * held, one at a time. A test CTRF marks as retried (`retries`) is written as its attempts: each retry before the
 * test's own result (`retryAttempts` gives their statuses and messages; without it, a retry follows a failure), with
 * retries 0, 1, …, and the test's own result last (a flaky test: passed on retry).
 */
export class CtrfParser extends JsonBaseParser {
  private sawTests = false;

  constructor(sink: ReportSink) {
    super('ctrf', sink, { maxStringChars: MAX_TEXT_CHARS * 2 + 2, skipKeys: SKIPPED_MEMBERS });
  }

  select(path: JsonPath, kind: JsonKind): 'collect' | 'descend' | 'skip' {
    switch (path.length) {
      case 0:
        if (kind !== 'object') {
          this.rejectShape();
          return 'skip';
        }
        return 'descend';
      case 1:
        return path[0] === 'results' && kind === 'object' ? 'descend' : 'skip';
      case 2:
        if (path[1] !== 'tests') {
          return 'skip';
        }
        if (kind !== 'array') {
          throw new ReportError(
            'MALFORMED',
            `results.tests of this CTRF report is ${kind === 'object' ? 'an' : 'a'} ${kind}, not an array`,
          );
        }
        this.sawTests = true;
        return 'descend';
      default:
        if (kind === 'object') {
          return 'collect';
        }
        this.out.warn(
          'notATest',
          `results.tests[${String(path[2])}] is a ${kind}, not a test object; it was skipped`,
        );
        return 'skip';
    }
  }

  value(path: JsonPath, value: JsonValue): void {
    if (!isObject(value)) {
      return;
    }
    const draft = new ResultDraft();
    draft.name = text(value.name);
    const suite = value.suite;
    draft.suite = Array.isArray(suite) ? suite.map((part) => text(part)).join(' > ') : text(suite);

    const status = text(value.status);
    draft.status =
      statusOf(status) ??
      this.out.unknownStatus('CTRF status', status, draft.name, ` at results.tests[${String(path[2])}]`);

    const duration = value.duration;
    if (typeof duration === 'number' && duration >= 0) {
      draft.durationMs = Math.round(duration);
    }
    const start = value.start;
    if (typeof start === 'number' && start > 0 && start < 253402300800000) {
      draft.startedAt = new Date(start).toISOString();
    }
    draft.message = text(value.message);
    draft.trace = text(value.trace);
    draft.stdout = this.lines(value.stdout);
    draft.stderr = this.lines(value.stderr);

    this.attributes(draft, value);
    const retries = value.retries;
    if (typeof retries === 'number' && retries > 0 && Number.isInteger(retries)) {
      this.emitRetries(draft, Math.min(retries, MAX_RETRY), value.retryAttempts);
    }
    this.out.emit(draft);
  }

  /**
   * The test's retries before its own result, each as an attempt of it (its name, suite and attributes; the status,
   * message, trace and duration its entry of `retryAttempts` gives, in the order of their `attempt`), retries 0, 1,
   * …; the draft is left as it was, its retry the count of retries: its last attempt. At most MAX_WRITTEN_RETRIES are
   * written (a number in a report is no evidence of that many runs).
   */
  private emitRetries(draft: ResultDraft, retries: number, details: JsonValue | undefined): void {
    const entries = (Array.isArray(details) ? details.filter(isObject) : [])
      .map((entry, i) => ({ entry, order: typeof entry.attempt === 'number' ? entry.attempt : i }))
      .sort((a, b) => a.order - b.order)
      .map(({ entry }) => entry);
    const written = Math.min(retries, MAX_WRITTEN_RETRIES);
    if (written < retries) {
      this.out.warn(
        'retries',
        `Test ${quote(draft.name)} was retried ${retries} times; its first ${written} retries were imported as ` +
          'attempts',
      );
    }
    this.out.emitAttempts(
      draft,
      Array.from({ length: written }, (_, retry): EarlierAttempt => {
        const entry: JsonObject = entries[retry] ?? {};
        return {
          status: statusOf(text(entry.status)) ?? 'FAILED',
          message: text(entry.message),
          trace: text(entry.trace),
          durationMs:
            typeof entry.duration === 'number' && entry.duration >= 0 ? Math.round(entry.duration) : NaN,
        };
      }),
    );
    draft.retry = retries;
  }

  protected override finish(): void {
    if (!this.sawTests) {
      this.throwWrongFormat();
    }
  }

  protected shapeHint(): string {
    return 'CTRF is a JSON object with results.tests';
  }

  private lines(value: JsonValue | undefined): string {
    if (Array.isArray(value)) {
      return value.map((line) => text(line)).join('\n');
    }
    return text(value);
  }

  private attributes(draft: ResultDraft, test: JsonObject): void {
    const tags = test.tags;
    if (Array.isArray(tags) && tags.length > 0) {
      draft.addAttribute('tags', tags.map((tag) => text(tag)).join(', '));
    }
    for (const key of ATTRIBUTE_MEMBERS) {
      const value = test[key];
      if (
        value !== undefined &&
        value !== null &&
        !isObject(value) &&
        !Array.isArray(value) &&
        value !== false
      ) {
        draft.addAttribute(key, text(value));
      }
    }
    const labels = test.labels;
    if (isObject(labels)) {
      for (const key in labels) {
        const value = labelText(labels[key]);
        if (value !== undefined) {
          draft.addAttribute(key, value);
        }
      }
    }
  }
}
