import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ProjectSettings, SettingsPatch } from '../../../api/client';
import { ApiError } from '../../../api/session';
import { useApi } from '../../../session-context';

export const settingsKey = (projectId: number) => ['settings', projectId] as const;

/**
 * A 400 of the settings as problems by field: the API names each field (`flaky.window must be …`, problems joined by
 * `; `), so each is shown beside its own input; what names no field of `group` stays in `other`.
 */
export function problemsOf(
  error: unknown,
  group: keyof ProjectSettings,
): { byField: Record<string, string>; other: string[] } {
  const byField: Record<string, string> = {};
  const other: string[] = [];
  if (!(error instanceof ApiError) || error.status !== 400) {
    return { byField, other };
  }
  for (const problem of error.message.split('; ')) {
    const match = new RegExp(`^${group}\\.(\\w+) (.*)$`, 's').exec(problem.trim());
    if (match) {
      byField[match[1]] = `${sentence(match[2])}`;
    } else {
      other.push(problem);
    }
  }
  return { byField, other };
}

/** "must be a whole number from 2 to 500" → "Must be a whole number from 2 to 500." */
function sentence(text: string): string {
  const t = text.trim();
  return `${t.charAt(0).toUpperCase()}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
}

/** The fields of `next` that differ from `current`: a change sends only those (the audit says what changed). */
export function changedFields<T extends object>(current: T, next: T): Partial<T> {
  const changed: Partial<T> = {};
  for (const key of Object.keys(next) as (keyof T)[]) {
    if (JSON.stringify(current[key]) !== JSON.stringify(next[key])) {
      changed[key] = next[key];
    }
  }
  return changed;
}

/** A change of one group of settings; the answer (the whole settings) replaces what the page shows. */
export function useSettingsChange(projectId: number) {
  const api = useApi();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: (patch: SettingsPatch) => api.changeSettings(projectId, patch),
    onSuccess: (settings) => queries.setQueryData(settingsKey(projectId), settings),
  });
}

/** A whole number typed in a box, or undefined when it is not one. */
export function wholeNumber(text: string): number | undefined {
  return /^\s*-?\d+\s*$/.test(text) ? Number(text) : undefined;
}

/** Why a whole number typed is out of `min`..`max`, or undefined when it is in. */
export function rangeProblem(text: string, min: number, max: number): string | undefined {
  const n = wholeNumber(text);
  return n === undefined || n < min || n > max ? `A whole number from ${min} to ${max}.` : undefined;
}
