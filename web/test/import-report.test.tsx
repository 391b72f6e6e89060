import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Session } from '../src/api/session';
import { ImportReport } from '../src/pages/projects/ImportReport';
import { SessionProvider } from '../src/session-context';

/** The uploads sent, answered with an import of one test. */
const sent: string[] = [];
class FakeXhr {
  status = 0;
  statusText = '';
  responseText = '';
  upload = { onprogress: undefined as unknown };
  onload?: () => void;
  onerror?: () => void;
  private url = '';
  open(_method: string, url: string) {
    this.url = url;
  }
  setRequestHeader() {}
  send() {
    sent.push(this.url);
    this.status = 201;
    const counts = { total: 1, passed: 1, failed: 0, broken: 0, skipped: 0, passedOnRetry: 0, attempts: 1 };
    this.responseText = JSON.stringify({ runId: 9, format: 'junit', counts, warnings: [] });
    setTimeout(() => this.onload?.());
  }
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

/** A fetch that answers everything but the session's refresh as a project the caller reports to. */
const fetchImpl = vi.fn(async (input: RequestInfo | URL) => {
  const url = new URL(String(input), 'http://localhost');
  if (url.pathname === '/api/auth/refresh') {
    return json(200, { accessToken: 'jwt', tokenType: 'Bearer', expiresIn: 900 });
  }
  return json(200, { id: 3, key: 'P', name: 'Project', role: 'OWNER', latestRun: null });
});

function renderPage() {
  const session = new Session({
    fetch: fetchImpl as unknown as typeof fetch,
    locks: { request: (_n, cb) => cb() },
  });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <SessionProvider session={session}>
        <MemoryRouter initialEntries={['/projects/3/import']}>
          <Routes>
            <Route path="/projects/:projectId/import" element={<ImportReport />} />
          </Routes>
        </MemoryRouter>
      </SessionProvider>
    </QueryClientProvider>,
  );
}

describe('ImportReport', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    sent.length = 0;
  });

  it('names the run after the file and the time unless named, and sends branch, commit and environment', async () => {
    vi.stubGlobal('XMLHttpRequest', FakeXhr);
    const user = userEvent.setup();
    renderPage();
    const file = new File(['<testsuite/>'], 'TEST-shop.xml', { type: 'application/xml' });
    await user.upload(await screen.findByLabelText(/Drop a report here/), file);
    await user.type(screen.getByLabelText('Branch (optional)'), 'main');
    await user.type(screen.getByLabelText('Commit (optional)'), '4f2a9c1');
    await user.type(screen.getByLabelText('Environment (optional)'), 'staging');
    await user.click(screen.getByRole('button', { name: 'Import' }));
    await waitFor(() => expect(sent).toHaveLength(1));
    const query = new URL(sent[0], 'http://localhost').searchParams;
    expect(query.get('runName')).toMatch(/^TEST-shop\.xml \d{4}-\d\d-\d\dT\d\d:\d\d/);
    expect([query.get('branch'), query.get('commit'), query.get('env')]).toEqual([
      'main',
      '4f2a9c1',
      'staging',
    ]);
    // Imported: the file is let go (Import again would be the same run twice); the build's fields stay.
    expect(await screen.findByRole('link', { name: 'Open the run' })).toBeTruthy();
    expect((screen.getByLabelText(/Drop a report here/) as HTMLInputElement).value).toBe('');
    expect(screen.queryByText(/^Selected:/)).toBeNull();
    expect((screen.getByRole('button', { name: 'Import' }) as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByLabelText('Branch (optional)') as HTMLInputElement).value).toBe('main');
  });
});
