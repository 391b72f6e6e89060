import { jest } from '@jest/globals';
import { AppError } from '../app-error.js';
import { pageRequest, toPage, withWindowTotal } from './page.js';

describe(pageRequest.name, () => {
  const sortable = ['name', 'startedAt'] as const;
  const fallback = [{ field: 'startedAt' as const, direction: 'DESC' as const }];

  it('defaults to the first page of 20 in the resource order', () => {
    expect(pageRequest({}, sortable, fallback)).toEqual({ page: 0, size: 20, offset: 0, sort: fallback });
  });

  it('computes the offset and keeps several sort orders in the given order', () => {
    const sut = pageRequest({ page: 3, size: 50, sort: ['name,desc', 'startedAt'] }, sortable, fallback);
    expect(sut.offset).toBe(150);
    expect(sut.sort).toEqual([
      { field: 'name', direction: 'DESC' },
      { field: 'startedAt', direction: 'ASC' },
    ]);
  });

  it('sorts by a field given twice in its first order only', () => {
    expect(pageRequest({ sort: ['name,desc', 'startedAt', 'name,asc', 'name'] }, sortable, fallback).sort).toEqual([
      { field: 'name', direction: 'DESC' },
      { field: 'startedAt', direction: 'ASC' },
    ]);
  });

  it('refuses fields outside the allow-list and names the allowed ones', () => {
    expect(() => pageRequest({ sort: ['password,asc'] }, sortable, fallback)).toThrow(AppError);
    expect(() => pageRequest({ sort: ['password,asc'] }, sortable, fallback)).toThrow(/name, startedAt/);
  });
});

describe(toPage.name, () => {
  it('counts pages', () => {
    expect(toPage([1, 2], 153, { page: 0, size: 20 })).toEqual({
      content: [1, 2],
      page: 0,
      size: 20,
      totalElements: 153,
      totalPages: 8,
    });
    expect(toPage([], 0, { page: 0, size: 20 }).totalPages).toBe(0);
  });
});

describe(withWindowTotal.name, () => {
  const countAll = jest.fn(() => Promise.resolve(7));
  beforeEach(() => countAll.mockClear());

  it('takes the total from the rows and drops the window column', async () => {
    const rows = [
      { id: 'a', n: '7' },
      { id: 'b', n: '7' },
    ];
    await expect(withWindowTotal(rows, { offset: 0 }, countAll)).resolves.toEqual([
      [{ id: 'a' }, { id: 'b' }],
      7,
    ]);
    expect(countAll).not.toHaveBeenCalled();
  });

  it('counts apart only for a page past the end', async () => {
    await expect(withWindowTotal([], { offset: 40 }, countAll)).resolves.toEqual([[], 7]);
    expect(countAll).toHaveBeenCalledTimes(1);
    await expect(withWindowTotal([], { offset: 0 }, countAll)).resolves.toEqual([[], 0]);
    expect(countAll).toHaveBeenCalledTimes(1);
  });
});
