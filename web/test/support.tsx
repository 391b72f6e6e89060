/**
 * What the pages' component tests share: a fetch that plays the API from a table of routes, a page of items, and a
 * page rendered at a URL with the session, the query client and the router it needs.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import type React from 'react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { vi } from 'vitest';
import type { Page, TestCase } from '../src/api/client';
import { Session } from '../src/api/session';
import { SessionProvider } from '../src/session-context';

export const json = (status: number, body?: unknown) =>
  new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });

export const pageOf = <T,>(content: T[], page = 0, size = 20, totalElements = content.length): Page<T> => ({
  content,
  page,
  size,
  totalElements,
  totalPages: Math.max(1, Math.ceil(totalElements / size)),
});

/**
 * A fetch that answers `METHOD /path` (or just `/path` for a GET) through `routes`, a Response as it is and anything
 * else as JSON (a promise once it settles: a request held open); the refresh always succeeds, an unknown path is a
 * 404. Records every call.
 */
export function api(routes: Record<string, (url: URL) => unknown>) {
  return vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input), 'http://localhost');
    if (url.pathname === '/api/auth/refresh') {
      return json(200, { accessToken: 'jwt', tokenType: 'Bearer', expiresIn: 900 });
    }
    const method = init?.method ?? 'GET';
    const route =
      routes[`${method} ${url.pathname}`] ?? (method === 'GET' ? routes[url.pathname] : undefined);
    if (!route) {
      return json(404, { status: 404, error: 'Not Found', message: `${method} ${url.pathname}` });
    }
    const answer: unknown = await route(url);
    return answer instanceof Response ? answer : json(200, answer);
  });
}

export type FakeApi = ReturnType<typeof api>;

/** The URLs the page asked for at `path`, whatever the method. */
export const calls = (fetchImpl: FakeApi, path: string) =>
  fetchImpl.mock.calls
    .map(([input]) => new URL(String(input), 'http://localhost'))
    .filter((u) => u.pathname === path);

/** The calls of `method` to `path`, with their request options. */
export const requests = (fetchImpl: FakeApi, method: string, path: string) =>
  fetchImpl.mock.calls.filter(
    ([input, init]) =>
      (init?.method ?? 'GET') === method && new URL(String(input), 'http://localhost').pathname === path,
  );

/** Where the router is: the page's URL query, shown for the test to read (see `where`). */
function Where() {
  const location = useLocation();
  // A plain element: an <output> is a live "status" region, which pages under test have of their own.
  return <span data-testid="where">{location.search}</span>;
}
export const where = () => screen.getByTestId('where').textContent;

/** `element` rendered at `path` under the route `pattern`, its API played by `fetchImpl`. */
export function renderAt(path: string, pattern: string, element: React.ReactNode, fetchImpl: FakeApi) {
  const session = new Session({
    fetch: fetchImpl as unknown as typeof fetch,
    locks: { request: (_n, cb) => cb() },
  });
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queries}>
      <SessionProvider session={session}>
        <MemoryRouter initialEntries={[path]}>
          <Routes>
            <Route path={pattern} element={element} />
          </Routes>
          <Where />
        </MemoryRouter>
      </SessionProvider>
    </QueryClientProvider>,
  );
}

/** A test case as the tests list answers it: healthy, 10 runs, in suite Checkout, with `changes` over that. */
export const testCase = (id: number, name: string, changes: Partial<TestCase> = {}): TestCase => ({
  id,
  suite: 'Checkout',
  name,
  lastStatus: 'PASSED',
  flaky: false,
  flakeRate: 0,
  runs: 10,
  firstSeenAt: '2026-11-20T10:00:00.000Z',
  lastFailedAt: null,
  quarantine: null,
  state: 'HEALTHY',
  ...changes,
});
