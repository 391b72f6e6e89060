import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { NotifyMe as Prefs } from '../../../api/client';
import { useApi } from '../../../session-context';
import { ErrorMessage } from '../../../ui/components';

export const notifyMeKey = (projectId: number) => ['notify-me', projectId] as const;

/**
 * "Notify me": the mail about this project the reader asked for (any member): when a run fails its quality gate,
 * when a run brings new failures. Each box saves as it is ticked.
 */
export function NotifyMe({ projectId, compact = false }: { projectId: number; compact?: boolean }) {
  const api = useApi();
  const queries = useQueryClient();
  const prefs = useQuery({ queryKey: notifyMeKey(projectId), queryFn: () => api.getNotifyMe(projectId) });
  // What the boxes show once clicked, until the saved values reach the query (`base`, the values the click changed,
  // is then no longer what the query holds): set in the click's own render, as a controlled box would otherwise
  // show its old state until the change reached the cache, which tells its readers a moment later.
  const [pending, setPending] = useState<{ values: Prefs; base: Prefs | undefined }>();
  const shown = pending && pending.base === prefs.data ? pending.values : prefs.data;
  const save = useMutation({
    mutationFn: (change: Partial<Prefs>) => api.putNotifyMe(projectId, change),
    onSuccess: (saved) => queries.setQueryData(notifyMeKey(projectId), saved),
    // A refused change puts its box back.
    onError: () => setPending(undefined),
  });
  const toggle = (key: keyof Prefs, checked: boolean) => {
    setPending({ values: { ...shown!, [key]: checked }, base: prefs.data });
    save.mutate({ [key]: checked });
  };
  const box = (key: keyof Prefs, label: string) => (
    <label className="check">
      <input
        type="checkbox"
        checked={shown?.[key] ?? false}
        disabled={!prefs.data || save.isPending}
        onChange={(e) => toggle(key, e.target.checked)}
      />{' '}
      {label}
    </label>
  );
  return (
    <fieldset className={compact ? 'notify-me compact' : 'notify-me'}>
      <legend>Notify me by mail</legend>
      {prefs.error ? (
        <ErrorMessage error={prefs.error} />
      ) : (
        <>
          {box('runFailed', 'when a run fails')}
          {box('newFailures', 'of new failures')}
        </>
      )}
      {save.error ? <ErrorMessage error={save.error} /> : null}
    </fieldset>
  );
}
