import { AppError } from './app-error.js';
import { isStorableText } from './formats.js';
import { NO_CONTROL_CHARS } from './text.js';

/**
 * A project's policies (API.md, "Project settings"): one resource of groups, each field with a default. A project
 * stores only what was set (projects.settings, JSONB); what is read is the defaults with that laid over them.
 * Only `streams` has behaviour so far (see streams.ts); the other groups are kept for what builds on them.
 */
export interface ProjectSettings {
  flaky: {
    window: number;
    minRuns: number;
    flipRate: number;
    autoQuarantine: boolean;
    releaseAfterPasses: number;
  };
  gate: {
    enabled: boolean;
    maxFailed: number | null;
    minPassRate: number | null;
    minTotal: number | null;
    noNewFailures: boolean;
    ignoreQuarantined: boolean;
    ignoreKnownIssues: boolean;
  };
  triage: { similarity: number };
  retention: { keepDays: number | null; keepRuns: number | null };
  streams: { attributes: string[]; default: string | null };
}

export const DEFAULT_SETTINGS: ProjectSettings = {
  flaky: { window: 30, minRuns: 5, flipRate: 0.2, autoQuarantine: false, releaseAfterPasses: 10 },
  gate: {
    enabled: true,
    maxFailed: 0,
    minPassRate: null,
    minTotal: null,
    noNewFailures: false,
    ignoreQuarantined: true,
    ignoreKnownIssues: true,
  },
  triage: { similarity: 0.8 },
  retention: { keepDays: null, keepRuns: null },
  streams: { attributes: ['branch', 'env'], default: null },
};

/** The longest stream name (a run's `stream`, `?stream=`, `streams.default`). */
export const MAX_STREAM_CHARS = 200;

/** Why a stream name is not one, or undefined when it is. */
export function streamProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/\S/.test(value)) {
    return 'must be a non-blank string';
  }
  if ([...value].length > MAX_STREAM_CHARS) {
    return `must be at most ${MAX_STREAM_CHARS} characters`;
  }
  if (!NO_CONTROL_CHARS.test(value) || !isStorableText(value)) {
    return 'must be one line without control characters';
  }
  return undefined;
}

type Check = (value: unknown) => string | undefined;

/** The largest `flaky.window`: a test keeps this many runs of state at most (src/stability/). */
export const MAX_FLAKY_WINDOW = 500;

/** SQL for a project's `flaky.window` (its stored setting, else the default); `project`: SQL for its id. */
export function flakyWindowSql(project: string): string {
  return `(SELECT coalesce((settings->'flaky'->>'window')::int, ${DEFAULT_SETTINGS.flaky.window}) FROM projects WHERE id = ${project})`;
}

/** The largest `retention.keepDays` and `retention.keepRuns` (API.md, "Retention"). */
export const RETENTION_MAX = 100_000;

const int =
  (min: number, max: number, nullable = false): Check =>
  (v) =>
    (v === null && nullable) || (Number.isInteger(v) && (v as number) >= min && (v as number) <= max)
      ? undefined
      : `must be a whole number from ${min} to ${max}${nullable ? ', or null' : ''}`;
const num =
  (min: number, max: number, nullable = false): Check =>
  (v) =>
    (v === null && nullable) || (typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max)
      ? undefined
      : `must be a number from ${min} to ${max}${nullable ? ', or null' : ''}`;
const bool: Check = (v) => (typeof v === 'boolean' ? undefined : 'must be true or false');
const attributeNames: Check = (v) =>
  Array.isArray(v) &&
  v.length <= 10 &&
  new Set(v).size === v.length &&
  v.every(
    (k) =>
      typeof k === 'string' &&
      k.length >= 1 &&
      k.length <= 100 &&
      NO_CONTROL_CHARS.test(k) &&
      isStorableText(k),
  )
    ? undefined
    : 'must be a list of at most 10 distinct attribute names (1 to 100 characters, one line each)';
const streamOrNull: Check = (v) => (v === null ? undefined : streamProblem(v));

const RULES: { [G in keyof ProjectSettings]: { [F in keyof ProjectSettings[G]]: Check } } = {
  flaky: {
    window: int(2, MAX_FLAKY_WINDOW),
    // At most the window too: see flakyProblems (the two are weighed together, with what is stored).
    minRuns: int(2, MAX_FLAKY_WINDOW),
    flipRate: num(0, 1),
    autoQuarantine: bool,
    releaseAfterPasses: int(1, 100),
  },
  gate: {
    enabled: bool,
    maxFailed: int(0, 1_000_000_000, true),
    minPassRate: num(0, 100, true),
    minTotal: int(0, 1_000_000_000, true),
    noNewFailures: bool,
    ignoreQuarantined: bool,
    ignoreKnownIssues: bool,
  },
  triage: { similarity: num(0, 1) },
  retention: { keepDays: int(1, RETENTION_MAX, true), keepRuns: int(1, RETENTION_MAX, true) },
  streams: { attributes: attributeNames, default: streamOrNull },
};

export type SettingsPatch = { [G in keyof ProjectSettings]?: Partial<ProjectSettings[G]> };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `body` checked whole as a change of settings: 400 naming every field that is wrong or unknown. */
export function validatePatch(body: unknown): SettingsPatch {
  if (!isObject(body)) {
    throw AppError.validation('The body must be a JSON object of settings groups');
  }
  const problems: string[] = [];
  for (const [group, fields] of Object.entries(body)) {
    const rules = (RULES as Record<string, Record<string, Check>>)[group];
    if (!Object.hasOwn(RULES, group)) {
      problems.push(`${group} is not a settings group (${Object.keys(RULES).join(', ')})`);
      continue;
    }
    if (!isObject(fields)) {
      problems.push(`${group} must be an object`);
      continue;
    }
    for (const [field, value] of Object.entries(fields)) {
      const check = Object.hasOwn(rules, field) ? rules[field] : undefined;
      const problem = check ? check(value) : `is not a setting (${Object.keys(rules).join(', ')})`;
      if (problem) {
        problems.push(`${group}.${field} ${problem}`);
      }
    }
  }
  if (problems.length) {
    throw AppError.validation(problems.join('; '));
  }
  return body;
}

/**
 * What is wrong with the flaky settings a change would leave (`minRuns` at most `window`), the field named as the
 * change gave it, or undefined. `stored` is what the project stored before the change.
 */
export function flakyProblem(stored: unknown, patch: SettingsPatch): string | undefined {
  const after = effectiveSettings(stored).flaky;
  Object.assign(after, patch.flaky ?? {});
  if (after.minRuns > after.window) {
    return patch.flaky?.minRuns !== undefined
      ? `flaky.minRuns must be at most flaky.window (${after.window})`
      : `flaky.window must be at least flaky.minRuns (${after.minRuns})`;
  }
  return undefined;
}

/** The effective settings: the defaults with what a project stored laid over them, group by group. */
export function effectiveSettings(stored: unknown): ProjectSettings {
  const out = structuredClone(DEFAULT_SETTINGS);
  if (isObject(stored)) {
    for (const group of Object.keys(out) as (keyof ProjectSettings)[]) {
      const fields = stored[group];
      if (isObject(fields)) {
        for (const field of Object.keys(out[group])) {
          if (Object.hasOwn(fields, field)) {
            (out[group] as Record<string, unknown>)[field] = fields[field];
          }
        }
      }
    }
  }
  return out;
}
