import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { ListQuery, QuarantineRequest, TestCase, TestState } from '../../../api/client';
import { useApi } from '../../../session-context';

/**
 * The query keys of a project's tests: every list of them starts with `all`, so a quarantine refreshes them all; a
 * test's recent history is apart (a quarantine does not change it).
 */
export const testKeys = {
  all: (projectId: number) => ['tests', projectId] as const,
  list: (projectId: number, query: ListQuery) => ['tests', projectId, 'list', query] as const,
  marked: (projectId: number) => ['tests', projectId, 'marked'] as const,
  one: (projectId: number, testId: number) => ['test', projectId, testId] as const,
  recent: (projectId: number, testId: number) => ['history', projectId, testId, 'recent'] as const,
};

/** The most the marks read: the API's largest page. A project with more flaky and quarantined tests than this has
 * bigger problems than an unmarked row; the page says so. */
export const MARKED_LIMIT = 500;

export interface Marks {
  /** The state of each flaky or quarantined test by its id, and whether its quarantine was automatic. */
  get: (testId: number) => { state: TestState; auto: boolean } | undefined;
  /** Whether there were more such tests than one request reads. */
  partial: boolean;
}

/**
 * The project's flaky and quarantined tests, read once per page view in one request, to mark them where results are
 * listed (the run page, compare). Nothing is read until the project is known.
 */
export function useMarkedTests(projectId: number | undefined): Marks {
  const api = useApi();
  const marked = useQuery({
    queryKey: testKeys.marked(projectId ?? 0),
    queryFn: () => api.listTests(projectId!, { state: 'FLAKY,QUARANTINED', size: MARKED_LIMIT }),
    enabled: projectId !== undefined,
    staleTime: 60_000,
    refetchOnWindowFocus: false,
  });
  const byId = new Map<number, { state: TestState; auto: boolean }>();
  for (const t of marked.data?.content ?? []) {
    byId.set(t.id, { state: t.state, auto: t.quarantine?.auto ?? false });
  }
  return {
    get: (testId) => byId.get(testId),
    partial: (marked.data?.totalElements ?? 0) > (marked.data?.content.length ?? 0),
  };
}

/** Quarantine and release of a project's tests (MAINTAINER), refreshing every view of its tests afterwards. */
export function useQuarantineActions(projectId: number) {
  const api = useApi();
  const queries = useQueryClient();
  const refresh = (testId: number) => {
    void queries.invalidateQueries({ queryKey: testKeys.all(projectId) });
    void queries.invalidateQueries({ queryKey: testKeys.one(projectId, testId) });
  };
  const quarantine = useMutation({
    mutationFn: ({ test, request }: { test: Pick<TestCase, 'id' | 'name'>; request: QuarantineRequest }) =>
      api.quarantineTest(projectId, test.id, request),
    onSuccess: (updated, { test }) => {
      queries.setQueryData(testKeys.one(projectId, test.id), updated);
      refresh(test.id);
    },
  });
  const release = useMutation({
    mutationFn: (test: Pick<TestCase, 'id' | 'name'>) => api.releaseTest(projectId, test.id),
    onSuccess: (_, test) => refresh(test.id),
  });
  return { quarantine, release };
}
