import { AppError } from '../common/app-error.js';
import type { SortOrder } from '../common/paging/page.js';
import type { TestKey, TestSortField } from './runs.repository.js';

/**
 * Where the next page of a project's tests starts (GET /api/projects/{id}/tests?cursor=…): the sort key of the
 * last row given, so that the page is read from there by the index, however deep, instead of counting rows off
 * with OFFSET; the project, order and `q` it belongs to; the offset it stands for (the page number shown); and the
 * total counted for the list's first page, which the pages after it carry instead of counting again.
 */
export interface TestsCursor {
  /** The project whose tests it continues. */
  p: string;
  /** The key order: `suite,ASC;name,ASC;id,ASC`. */
  s: string;
  q: string;
  k: TestKey;
  o: number;
  n: number;
}

export function orderOf(keys: SortOrder<TestSortField>[]): string {
  return keys.map((k) => `${k.field},${k.direction}`).join(';');
}

export function encodeCursor(cursor: TestsCursor): string {
  return Buffer.from(JSON.stringify(cursor)).toString('base64url');
}

/** The cursor, checked to be one this service gave out for this project, order and `q`; else a 400 naming `cursor`. */
export function decodeCursor(text: string, expected: { p: string; s: string; q: string }): TestsCursor {
  let cursor: Partial<TestsCursor> | null = null;
  try {
    cursor = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<TestsCursor>;
  } catch {
    // Not JSON: refused below.
  }
  const keys = typeof cursor?.s === 'string' ? cursor.s.split(';') : [];
  const valid =
    cursor !== null &&
    typeof cursor === 'object' &&
    typeof cursor.p === 'string' &&
    typeof cursor.q === 'string' &&
    Array.isArray(cursor.k) &&
    cursor.k.length === keys.length &&
    cursor.k.every((v, i) =>
      keys[i].startsWith('id,') ? typeof v === 'string' && /^\d{1,18}$/.test(v) : typeof v === 'string',
    ) &&
    Number.isSafeInteger(cursor.o) &&
    cursor.o! >= 0 &&
    Number.isSafeInteger(cursor.n) &&
    cursor.n! >= 0;
  if (!valid) {
    throw AppError.validation(
      'cursor is not one this list gave out: pass the nextCursor of a page as it came',
    );
  }
  if (cursor!.p !== expected.p) {
    throw AppError.validation(
      "cursor belongs to another project's tests: it continues only the list it came from",
    );
  }
  if (cursor!.s !== expected.s || cursor!.q !== expected.q) {
    throw AppError.validation('cursor belongs to another sort or q: it continues only the list it came from');
  }
  return cursor as TestsCursor;
}
