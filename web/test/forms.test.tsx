import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter } from 'react-router';
import { describe, expect, it, vi } from 'vitest';
import { Session } from '../src/api/session';
import { passwordProblem, ResetPassword } from '../src/pages/Account';
import { sameOriginPath, SignIn } from '../src/pages/SignIn';
import { SessionProvider } from '../src/session-context';

function renderWith(ui: React.ReactNode, fetchImpl: typeof fetch, path = '/') {
  const session = new Session({ fetch: fetchImpl, locks: { request: (_n, cb) => cb() } });
  render(
    <QueryClientProvider client={new QueryClient()}>
      <SessionProvider session={session}>
        <MemoryRouter initialEntries={[path]}>{ui}</MemoryRouter>
      </SessionProvider>
    </QueryClientProvider>,
  );
  return session;
}

const answer = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(status === 204 ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });

describe('password rules', () => {
  it('are the server policy: 12 to 256 characters, not the email', () => {
    expect(passwordProblem('short')).toBe('At least 12 characters (5 so far).');
    expect(passwordProblem('x'.repeat(257))).toBe('At most 256 characters.');
    expect(passwordProblem('ada@example.com', 'Ada@Example.com')).toBe('Not your email address.');
    expect(passwordProblem('a fine long passphrase')).toBeUndefined();
  });
});

describe('ResetPassword', () => {
  it('shows the policy before submit, refuses a short or differing password, then sends it', async () => {
    const fetchImpl = vi.fn(async (input: RequestInfo | URL, _init?: RequestInit) =>
      String(input) === '/api/auth/refresh' ? answer(401, {}) : answer(204, undefined),
    );
    renderWith(<ResetPassword />, fetchImpl as unknown as typeof fetch, '/reset-password?token=abc');
    expect(await screen.findByText(/At least 12 characters; not your email address/)).toBeTruthy();
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('New password'), 'short');
    await user.type(screen.getByLabelText('Repeat the password'), 'other');
    await user.click(screen.getByRole('button', { name: 'Set new password' }));
    expect(screen.getByText('At least 12 characters (5 so far).')).toBeTruthy();
    expect(screen.getByText('The two passwords differ.')).toBeTruthy();
    expect(fetchImpl.mock.calls.filter(([p]) => String(p) === '/api/auth/reset-password')).toHaveLength(0);
    await user.clear(screen.getByLabelText('New password'));
    await user.type(screen.getByLabelText('New password'), 'a fine long passphrase');
    await user.clear(screen.getByLabelText('Repeat the password'));
    await user.type(screen.getByLabelText('Repeat the password'), 'a fine long passphrase');
    await user.click(screen.getByRole('button', { name: 'Set new password' }));
    expect(await screen.findByText('Your password is changed.')).toBeTruthy();
    const sent = fetchImpl.mock.calls.find(([p]) => String(p) === '/api/auth/reset-password')!;
    expect(JSON.parse(String((sent[1] as RequestInit).body))).toEqual({
      token: 'abc',
      password: 'a fine long passphrase',
    });
  });
});

describe('SignIn', () => {
  it("shows the API's message on a wrong password, and counts down a 429's wait", async () => {
    const answers = [
      answer(401, { status: 401, error: 'Unauthorized', message: 'Invalid username or password' }),
      answer(
        429,
        { status: 429, error: 'Too Many Requests', message: 'Too many sign-ins' },
        { 'Retry-After': '30' },
      ),
    ];
    const fetchImpl = vi.fn(async (input: RequestInfo | URL, _init?: RequestInit) =>
      String(input) === '/api/auth/refresh' ? answer(401, {}) : answers.shift()!,
    );
    renderWith(<SignIn />, fetchImpl as unknown as typeof fetch, '/sign-in');
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Email or user name'), 'ada@example.com');
    await user.type(screen.getByLabelText('Password'), 'wrong password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Invalid username or password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/Try again in 30 s/);
    expect((screen.getByRole('button', { name: 'Sign in' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('asks for the two-factor code when the password step says so', async () => {
    const answers = [
      answer(200, { twoFactorRequired: true, challengeToken: 'ch', expiresIn: 300 }),
      answer(200, { accessToken: 'jwt', tokenType: 'Bearer', expiresIn: 900 }),
    ];
    const fetchImpl = vi.fn(async (input: RequestInfo | URL, _init?: RequestInit) =>
      String(input) === '/api/auth/refresh' ? answer(401, {}) : answers.shift()!,
    );
    const session = renderWith(<SignIn />, fetchImpl as unknown as typeof fetch, '/sign-in');
    const user = userEvent.setup();
    await user.type(await screen.findByLabelText('Email or user name'), 'ada@example.com');
    await user.type(screen.getByLabelText('Password'), 'right password');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    await user.type(await screen.findByLabelText('Code'), '123456');
    await user.click(screen.getByRole('button', { name: 'Verify' }));
    await vi.waitFor(() => expect(session.signedIn).toBe(true));
    const verify = fetchImpl.mock.calls.find(([p]) => String(p) === '/api/auth/2fa/verify')!;
    expect(JSON.parse(String((verify[1] as RequestInit).body))).toEqual({
      challengeToken: 'ch',
      code: '123456',
    });
  });
});

describe('sameOriginPath (where sign-in goes next)', () => {
  it('keeps paths of this origin and refuses others', () => {
    expect(sameOriginPath('/admin/audit?type=LOGIN_FAILURE')).toBe('/admin/audit?type=LOGIN_FAILURE');
    expect(sameOriginPath('//evil.example/x')).toBe('/');
    expect(sameOriginPath('/\\evil.example')).toBe('/');
    expect(sameOriginPath('https://evil.example/')).toBe('/');
    expect(sameOriginPath(null)).toBe('/');
  });
});
