import type { ResultStatus } from '../../results/entities.js';
import { JsonBaseParser } from './json-base.parser.js';
import type { JsonKind, JsonPath, JsonValue } from './json-stream.js';
import { quote } from './report-fields.js';
import { ResultDraft } from './result-emitter.js';
import { MAX_TEXT_CHARS, type ReportSink } from './report-parser.js';

/** Members of a scenario read over rather than kept: large (screenshots), and nothing the import stores. */
const SKIPPED_MEMBERS = new Set([
  'embeddings',
  'attachments',
  'output',
  'match',
  'rows',
  'doc_string',
  'description',
  'comments',
  'arguments',
]);

/**
 * Results of a feature held until its name is known (cucumber-js and cucumber-jvm write `name` after
 * `elements`), at most this many; past it they go out with the feature's file or id as their suite.
 */
const MAX_HELD_RESULTS = 2000;
const MAX_HELD_CHARS = 4 * MAX_TEXT_CHARS * 16;

type JsonObject = { [key: string]: JsonValue };

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

/** The step statuses of a scenario (with its background and hooks), combined. */
class Outcome {
  failed = false;
  ambiguous = false;
  notRun = false;
  unknown = '';
  durationNs = 0;
  timed = false;
  failure: string | undefined;
  ambiguity: string | undefined;
  notRunReason: string | undefined;

  add(other: Outcome): void {
    this.failed ||= other.failed;
    this.ambiguous ||= other.ambiguous;
    this.notRun ||= other.notRun;
    this.unknown ||= other.unknown;
    this.durationNs += other.durationNs;
    this.timed ||= other.timed;
    this.failure ??= other.failure;
    this.ambiguity ??= other.ambiguity;
    this.notRunReason ??= other.notRunReason;
  }

  /** Any failed: FAILED; else ambiguous (or unknown): BROKEN; else undefined, pending or skipped: SKIPPED. */
  status(): ResultStatus {
    return this.failed
      ? 'FAILED'
      : this.ambiguous || this.unknown
        ? 'BROKEN'
        : this.notRun
          ? 'SKIPPED'
          : 'PASSED';
  }

  message(): string {
    return (this.failed ? this.failure : this.ambiguous ? this.ambiguity : this.notRunReason) ?? '';
  }
}

/**
 * Cucumber JSON (cucumber-js, -ruby, -jvm): an array of features, each with `elements`. Every element of type
 * "scenario" is one result (each example row of an outline is one; backgrounds are not results), its suite the
 * feature's name. Its status combines its steps', its background's (cucumber-ruby and -jvm write the background
 * as the element before each scenario), its hooks' and its steps' hooks'. Scenarios are held one at a time.
 */
export class CucumberParser extends JsonBaseParser {
  private featureName = '';
  private featureUri = '';
  private featureId = '';
  /** The feature part of the first scenario id ("feature-id;scenario-id"). */
  private idPrefix = '';
  private held: ResultDraft[] = [];
  private heldChars = 0;
  /** Set when held results had to go before the name arrived: the suite for the rest of the feature. */
  private fixedSuite: string | undefined;
  private background: Outcome | undefined;
  private previousId = '';
  private previousRetry = 0;

  constructor(sink: ReportSink) {
    super('cucumber', sink, { maxStringChars: MAX_TEXT_CHARS * 2 + 2, skipKeys: SKIPPED_MEMBERS });
  }

  select(path: JsonPath, kind: JsonKind): 'collect' | 'descend' | 'skip' {
    switch (path.length) {
      case 0:
        if (kind !== 'array') {
          this.rejectShape();
          return 'skip';
        }
        return 'descend';
      case 1:
        if (kind !== 'object') {
          this.out.warn(
            'notAFeature',
            `Entry ${String(path[0])} of the report is a ${kind}, not a feature; it was skipped`,
          );
          return 'skip';
        }
        this.startFeature();
        return 'descend';
      case 2:
        switch (path[1]) {
          case 'elements':
            return kind === 'array' ? 'descend' : 'skip';
          case 'name':
          case 'uri':
          case 'id':
            return kind === 'string' ? 'collect' : 'skip';
          default:
            return 'skip';
        }
      default:
        if (path[1] === 'elements' && kind === 'object') {
          return 'collect';
        }
        return 'skip';
    }
  }

  value(path: JsonPath, value: JsonValue): void {
    if (path.length === 2) {
      const member = path[1];
      const textValue = text(value);
      if (member === 'name') {
        this.featureName = textValue;
        if (this.featureName.length > 0 && this.fixedSuite === undefined) {
          this.release(this.featureName);
        }
      } else if (member === 'uri') {
        this.featureUri = textValue;
      } else {
        this.featureId = textValue;
      }
    } else if (isObject(value)) {
      this.element(value);
    }
  }

  leave(path: JsonPath, kind: 'object' | 'array'): void {
    if (path.length === 1 && kind === 'object') {
      this.release(this.suite() ?? this.fallbackSuite());
    }
  }

  protected shapeHint(): string {
    return 'Cucumber JSON is an array of features';
  }

  private startFeature(): void {
    this.featureName = '';
    this.featureUri = '';
    this.featureId = '';
    this.idPrefix = '';
    this.fixedSuite = undefined;
    this.background = undefined;
    this.previousId = '';
    this.previousRetry = 0;
  }

  private element(element: JsonObject): void {
    const type = text(element.type);
    const keyword = text(element.keyword);
    if (type === 'background') {
      this.background = this.outcome(element);
      return;
    }
    if (type !== 'scenario') {
      this.out.warn(
        `element:${type}`,
        `A feature element of type ${quote(type || '(none)')} (${keyword || 'no keyword'}) is not a scenario; it was skipped`,
      );
      return;
    }
    const outcome = this.outcome(element);
    if (this.background !== undefined) {
      outcome.add(this.background);
      this.background = undefined;
    }

    const draft = new ResultDraft();
    draft.name = text(element.name);
    const line = text(element.line);
    if (draft.name.trim().length === 0) {
      draft.name = `${keyword.trim() || 'Scenario'} (line ${line || '?'})`;
      this.out.warn('unnamedScenario', `A scenario without a name was imported as ${quote(draft.name)}`);
    } else if (/outline/i.test(keyword) && line) {
      // Each example row of an outline is a test of its own (all rows share the outline's name, and in cucumber-js
      // its id too): told apart by the row's line.
      draft.name = `${draft.name} (example, line ${line})`;
    }
    draft.status = outcome.status();
    if (outcome.unknown) {
      this.out.warn(
        `status:${outcome.unknown}`,
        `Unknown Cucumber step status ${quote(outcome.unknown)} (scenario ${quote(draft.name)}); imported as BROKEN`,
      );
    }
    draft.message = outcome.message();
    if (outcome.timed) {
      draft.durationMs = Math.round(outcome.durationNs / 1e6);
    }
    draft.startedAt = text(element.start_timestamp);
    const tags = element.tags;
    if (Array.isArray(tags) && tags.length > 0) {
      draft.addAttribute('tags', tags.map((tag) => (isObject(tag) ? text(tag.name) : text(tag))).join(' '));
    }

    const id = text(element.id);
    const semicolon = id.indexOf(';');
    if (this.idPrefix.length === 0 && semicolon > 0) {
      this.idPrefix = id.slice(0, semicolon);
    }
    // cucumber --retry writes each attempt as an element of its own, one after the other, with the same id
    // (unnamed scenarios all have the id ";" and cannot be told apart).
    // An attempt: the same id at the same line, so that cucumber-js's outline rows (one id) are not taken for one.
    const key = `${id}\u0000${line}`;
    if (id.length > 0 && !id.endsWith(';') && key === this.previousId) {
      draft.retry = this.previousRetry + 1;
      this.out.warn(
        'retries',
        `Scenario ${quote(draft.name)} was attempted more than once (cucumber --retry); the attempts were ` +
          'imported as attempts of one test, numbered by retry, its last one its outcome',
      );
    }
    this.previousId = key;
    this.previousRetry = draft.retry;
    this.deliver(draft);
  }

  /** Combines the hooks and steps of one element, in the order they ran. */
  private outcome(element: JsonObject): Outcome {
    const outcome = new Outcome();
    this.hooks(outcome, element.before, 'Before hook', undefined);
    const steps = element.steps;
    if (Array.isArray(steps)) {
      for (const step of steps) {
        if (isObject(step)) {
          this.hooks(outcome, step.before, 'Before step hook of', step);
          this.entry(outcome, step, 'step', step);
          this.hooks(outcome, step.after, 'After step hook of', step);
        }
      }
    }
    this.hooks(outcome, element.after, 'After hook', undefined);
    return outcome;
  }

  private hooks(
    outcome: Outcome,
    hooks: JsonValue | undefined,
    what: string,
    step: JsonObject | undefined,
  ): void {
    if (Array.isArray(hooks)) {
      for (const hook of hooks) {
        if (isObject(hook)) {
          this.entry(outcome, hook, what, step);
        }
      }
    }
  }

  /**
   * One step or hook: its result's status, duration (nanoseconds) and error message. `what` and `step` name it
   * in a message, built only when one is needed.
   */
  private entry(outcome: Outcome, entry: JsonObject, what: string, step: JsonObject | undefined): void {
    const result = entry.result;
    if (!isObject(result)) {
      return;
    }
    const duration = result.duration;
    if (typeof duration === 'number' && duration >= 0) {
      outcome.durationNs += duration;
      outcome.timed = true;
    }
    const status = text(result.status);
    switch (status) {
      case 'passed':
        break;
      case 'failed':
        outcome.failed = true;
        outcome.failure ??= this.describe(result, what, step, 'failed');
        break;
      case 'ambiguous':
        outcome.ambiguous = true;
        outcome.ambiguity ??= this.describe(result, what, step, 'is ambiguous');
        break;
      case 'undefined':
      case 'pending':
        outcome.notRun = true;
        outcome.notRunReason ??= this.describe(result, what, step, `is ${status}`);
        break;
      case 'skipped':
        outcome.notRun = true;
        break;
      default:
        outcome.unknown ||= status.length > 0 ? status : '(none)';
    }
  }

  /** The error message of a result, or what happened to which step or hook. */
  private describe(result: JsonObject, what: string, step: JsonObject | undefined, happened: string): string {
    const error = text(result.error_message);
    if (error.length > 0) {
      return error;
    }
    const label = step === undefined ? '' : `${text(step.keyword)}${text(step.name)}`.trim();
    return label.length > 0 ? `The ${what} ${quote(label)} ${happened}` : `The ${what} ${happened}`;
  }

  private suite(): string | undefined {
    return this.fixedSuite ?? (this.featureName.length > 0 ? this.featureName : undefined);
  }

  private fallbackSuite(): string {
    return this.featureUri || this.featureId || this.idPrefix;
  }

  private deliver(draft: ResultDraft): void {
    const suite = this.suite();
    if (suite !== undefined) {
      draft.suite = suite;
      this.out.emit(draft);
      return;
    }
    this.held.push(draft);
    this.heldChars += draft.name.length + draft.message.length + 100;
    if (this.held.length >= MAX_HELD_RESULTS || this.heldChars >= MAX_HELD_CHARS) {
      this.fixedSuite = this.fallbackSuite();
      this.out.warn(
        'featureName',
        `A feature has more than ${MAX_HELD_RESULTS} scenarios before its name in the file; its scenarios were ` +
          `imported with the suite ${quote(this.fixedSuite)} (the feature's file or id) instead`,
      );
      this.release(this.fixedSuite);
    }
  }

  private release(suite: string): void {
    for (const draft of this.held) {
      draft.suite = suite;
      this.out.emit(draft);
    }
    this.held = [];
    this.heldChars = 0;
  }
}
