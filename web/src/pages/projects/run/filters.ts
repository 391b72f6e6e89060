/** The run page's view in its URL: the results' filters and sort, the failure group picked and its page. */
export const RUN_KEYS = ['status', 'suite', 'q', 'sort', 'group', 'gpage'] as const;
export type Filters = Record<(typeof RUN_KEYS)[number], string>;
export type SetFilters = (changes: Partial<Filters>, options?: { replace?: boolean }) => void;

export const STATUS_FILTERS: [string, string][] = [
  ['', 'all'],
  ['FAILED,BROKEN', 'failures (failed or broken)'],
  ['FAILED', 'failed'],
  ['BROKEN', 'broken'],
  ['PASSED', 'passed'],
  ['SKIPPED', 'skipped'],
];
