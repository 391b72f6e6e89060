import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
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
  const save = useMutation({
    mutationFn: (change: Partial<Prefs>) => api.putNotifyMe(projectId, change),
    // The box shows its new state at once; a refused change puts it back.
    onMutate: (change) => {
      const before = queries.getQueryData<Prefs>(notifyMeKey(projectId));
      if (before) {
        queries.setQueryData<Prefs>(notifyMeKey(projectId), { ...before, ...change });
      }
      return before;
    },
    onError: (_error, _change, before) => queries.setQueryData(notifyMeKey(projectId), before),
    onSuccess: (saved) => queries.setQueryData(notifyMeKey(projectId), saved),
  });
  const box = (key: keyof Prefs, label: string) => (
    <label className="check">
      <input
        type="checkbox"
        checked={prefs.data?.[key] ?? false}
        disabled={!prefs.data || save.isPending}
        onChange={(e) => save.mutate({ [key]: e.target.checked })}
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
