import type { ReactNode } from 'react';
import { ErrorMessage, Notice } from './components';

/** What a page needs of an action's state: TanStack Query's `useMutation` result has all of it. */
export interface ActionState<D, V> {
  status: 'idle' | 'pending' | 'success' | 'error';
  /** When it was last started (ms since the epoch); 0 when never. */
  submittedAt: number;
  error: unknown;
  data: D | undefined;
  variables: V | undefined;
}

/** An action with the words for its success (none: it succeeds silently, its result shows elsewhere). */
export interface Said {
  status: ActionState<unknown, unknown>['status'];
  submittedAt: number;
  error: unknown;
  notice: () => ReactNode;
}

export function said<D, V>(action: ActionState<D, V>, say?: (data: D, variables: V) => ReactNode): Said {
  return {
    status: action.status,
    submittedAt: action.submittedAt,
    error: action.error,
    notice: () =>
      say && action.status === 'success' ? say(action.data as D, action.variables as V) : undefined,
  };
}

/** How a page's latest action went. */
export interface Outcome<K extends string> {
  /** The action started last, if any has been. */
  latest: K | undefined;
  pending: boolean;
  /** Its success in words; undefined unless it succeeded (and says something). */
  notice: ReactNode;
  /** Its error; undefined unless it failed. */
  error: unknown;
  /** Its error if it is one of `keys`: for a form that shows its own error beside its button. */
  errorOf: (...keys: K[]) => unknown;
}

/**
 * The one outcome a page shows of its actions: that of the action started last, a success notice or an error,
 * never both. Once another action starts, the notice (or error) of the one before goes: a success never stays
 * beside the error of what came after it, and an old error never beside a later success. Derived from the actions'
 * own state at each render, so nothing has to remember to clear it.
 */
export function outcomeOf<K extends string>(actions: Record<K, Said>): Outcome<K> {
  let latest: K | undefined;
  for (const key of Object.keys(actions) as K[]) {
    const action = actions[key];
    if (action.status === 'idle') {
      continue;
    }
    const best = latest === undefined ? undefined : actions[latest];
    // Started in the same millisecond: the one still running or failed is the news, not the success.
    if (
      !best ||
      action.submittedAt > best.submittedAt ||
      (action.submittedAt === best.submittedAt && best.status === 'success')
    ) {
      latest = key;
    }
  }
  const action = latest === undefined ? undefined : actions[latest];
  const error = action?.status === 'error' ? action.error : undefined;
  return {
    latest,
    pending: action?.status === 'pending',
    notice: action?.status === 'success' ? action.notice() : undefined,
    error,
    errorOf: (...keys) => (latest !== undefined && keys.includes(latest) ? error : undefined),
  };
}

/**
 * The outcome where it belongs on the page: shown here only when the latest action is one of `only` (all when
 * absent), so each form can show its own error beside its button while the page still shows one outcome at a time.
 */
export function OutcomeLine<K extends string>({ of, only }: { of: Outcome<K>; only?: readonly K[] }) {
  if (of.latest === undefined || (only && !only.includes(of.latest))) {
    return null;
  }
  if (of.error) {
    return <ErrorMessage error={of.error} />;
  }
  return of.notice ? <Notice>{of.notice}</Notice> : null;
}
