import { useCallback, useMemo } from 'react';
import { useSearchParams } from 'react-router';

/**
 * A view's filters, sort and page held in the URL's query, so that a view can be shared and survives a reload.
 * Every key reads as a string ('' when absent). `set` merges changes; a change to anything but `page` goes back to
 * the first page; empty values (and page 0) leave the URL. `replace` for changes made while typing, so the
 * history is not one entry a keystroke.
 */
export function useUrlState<K extends string>(
  keys: readonly K[],
): [Record<K, string>, (changes: Partial<Record<K, string>>, options?: { replace?: boolean }) => void] {
  const [params, setParams] = useSearchParams();
  const values = useMemo(
    () => {
      const read: Partial<Record<K, string>> = {};
      for (const key of keys) {
        read[key] = params.get(key) ?? '';
      }
      return read as Record<K, string>;
    },
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the keys are a constant of each view
    [params],
  );
  const set = useCallback(
    (changes: Partial<Record<K, string>>, options: { replace?: boolean } = {}) => {
      setParams(
        (current) => {
          const next = new URLSearchParams(current);
          if (!('page' in changes)) {
            next.delete('page');
          }
          for (const [key, value] of Object.entries<string | undefined>(changes)) {
            if (value === undefined || value === '' || (key === 'page' && value === '0')) {
              next.delete(key);
            } else {
              next.set(key, value);
            }
          }
          return next;
        },
        { replace: options.replace },
      );
    },
    [setParams],
  );
  return [values, set];
}

/** A sort parameter (`field,asc|desc`) as field and direction. */
export function parseSort(sort: string): { field: string; direction: 'asc' | 'desc' } | undefined {
  const [field, direction] = sort.split(',');
  return field ? { field, direction: direction === 'desc' ? 'desc' : 'asc' } : undefined;
}

/** The sort after a click on `field`'s header: ascending first, then descending, then back to the default. */
export function nextSort(sort: string, field: string): string {
  const current = parseSort(sort);
  if (current?.field !== field) {
    return `${field},asc`;
  }
  return current.direction === 'asc' ? `${field},desc` : '';
}

/**
 * A sort as people read it, by the column's label: "by Duration descending". Empty when the view keeps its default
 * order. A field with no column (a hand-edited URL) is named as it is rather than hidden.
 */
export function sortInWords(sort: string, columns: readonly { field: string; label: string }[]): string {
  const current = parseSort(sort);
  if (!current) {
    return '';
  }
  const label = columns.find((c) => c.field === current.field)?.label ?? current.field;
  return `by ${label} ${current.direction === 'asc' ? 'ascending' : 'descending'}`;
}
