import { Type } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { AppError } from '../app-error.js';
import type { PageQueryDto } from './page-query.dto.js';

export const DEFAULT_PAGE_SIZE = 20;

export interface Page<T> {
  content: T[];
  page: number;
  size: number;
  totalElements: number;
  totalPages: number;
}

export interface SortOrder<F extends string> {
  field: F;
  direction: 'ASC' | 'DESC';
}

/** A validated page request: offset, limit and an order drawn only from the resource's allow-list. */
export interface PageRequest<F extends string> {
  page: number;
  size: number;
  offset: number;
  sort: SortOrder<F>[];
}

/**
 * Resolves a page query against the fields a resource lets clients sort on. Anything else is a 400
 * that names the allowed fields, so a typo never silently falls back to another order.
 */
export function pageRequest<F extends string>(
  query: PageQueryDto,
  sortable: readonly F[],
  defaultSort: SortOrder<F>[],
): PageRequest<F> {
  const page = query.page ?? 0;
  const size = query.size ?? DEFAULT_PAGE_SIZE;
  const sort: SortOrder<F>[] = [];
  for (const spec of query.sort ?? []) {
    const [field, dir = 'asc'] = spec.split(',');
    if (!sortable.includes(field as F)) {
      throw AppError.validation(
        `sort field '${field.length > 40 ? `${field.slice(0, 40)}…` : field}' is not supported; use one of: ${sortable.join(', ')}`,
      );
    }
    // A field sorted on again (`sort=name&sort=name,desc`) could change nothing: its first occurrence decides,
    // and the ORDER BY holds each column once.
    if (!sort.some((s) => s.field === field)) {
      sort.push({ field: field as F, direction: dir.toLowerCase() === 'desc' ? 'DESC' : 'ASC' });
    }
  }
  return { page, size, offset: page * size, sort: sort.length ? sort : defaultSort };
}

export function toPage<T>(content: T[], total: number, request: { page: number; size: number }): Page<T> {
  return {
    content,
    page: request.page,
    size: request.size,
    totalElements: total,
    totalPages: Math.ceil(total / request.size),
  };
}

/** OpenAPI schema for `Page<T>`: `PageOf(UserDto)` gives a class named `UserPage`. */
export function PageOf<T>(item: Type<T>): Type<Page<T>> {
  class PageDto implements Page<T> {
    @ApiProperty({ type: [item] })
    content: T[];

    @ApiProperty({ example: 0 })
    page: number;

    @ApiProperty({ example: 20 })
    size: number;

    @ApiProperty({ example: 153 })
    totalElements: number;

    @ApiProperty({ example: 8 })
    totalPages: number;
  }
  Object.defineProperty(PageDto, 'name', { value: `${item.name.replace(/Dto$/, '')}Page` });
  return PageDto;
}

/**
 * A page read with its total as a window count (`count(*) OVER () AS n`): the rows without `n`, and the total.
 * A page past the end has no row to carry the count, so only then is `countAll` asked.
 */
export async function withWindowTotal<R extends { n: string | number }>(
  rows: R[],
  request: { offset: number },
  countAll: () => Promise<number>,
): Promise<[Omit<R, 'n'>[], number]> {
  const total = rows.length ? Number(rows[0].n) : request.offset ? await countAll() : 0;
  return [rows.map(({ n: _n, ...row }) => row), total];
}
