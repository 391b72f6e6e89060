import { useQueries } from '@tanstack/react-query';
import { useState } from 'react';
import type { Page } from '../api/client';

/**
 * Rows of a long list read page by page as they come into view: `first`..`last` are the indexes shown (a
 * virtualised table's window), and only the API pages that cover them are fetched (each once, then cached). A
 * jump to the middle of 100,000 results reads the page there, not the pages before it.
 */
export function usePagedRows<T>(
  key: readonly unknown[],
  pageSize: number,
  fetchPage: (page: number) => Promise<Page<T>>,
  window: { first: number; last: number } | undefined,
): {
  /** Every row's count, known once a page has answered. */
  total: number | undefined;
  row: (index: number) => T | undefined;
  isPending: boolean;
  error: unknown;
} {
  const first = window ? Math.floor(window.first / pageSize) : 0;
  const last = window ? Math.floor(window.last / pageSize) : 0;
  const pages: number[] = [];
  for (let p = first; p <= last; p++) {
    pages.push(p);
  }
  const answers = useQueries({
    queries: pages.map((page) => ({
      queryKey: [...key, page],
      queryFn: () => fetchPage(page),
      staleTime: 30_000,
    })),
  });
  // The count stays as last seen while the pages of a new window load: the table keeps its height meanwhile.
  const [seen, setSeen] = useState<{ key: string; value: number } | undefined>();
  const keyText = JSON.stringify(key);
  const answered = answers.find((a) => a.data)?.data;
  if (answered && (seen?.key !== keyText || seen.value !== answered.totalElements)) {
    setSeen({ key: keyText, value: answered.totalElements });
  }
  const total = answered?.totalElements ?? (seen?.key === keyText ? seen.value : undefined);
  const byPage = new Map(pages.map((p, i) => [p, answers[i].data]));
  return {
    total,
    row: (index) => byPage.get(Math.floor(index / pageSize))?.content[index % pageSize],
    isPending: total === undefined && answers.some((a) => a.isPending),
    error: answers.find((a) => a.error)?.error,
  };
}
