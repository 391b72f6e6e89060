import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { Delivery, ProjectRole, Webhook } from '../src/api/client';
import { NotificationsSection } from '../src/pages/projects/notifications/NotificationsSection';
import { NotifyMe } from '../src/pages/projects/notifications/NotifyMe';
import { api, json, pageOf, renderAt, requests, where } from './support';

const webhook = (over: Partial<Webhook> = {}): Webhook => ({
  id: 7,
  projectId: 1,
  url: 'https://ci.example.com/hooks/tms',
  events: ['run.finished', 'run.failed'],
  format: 'standard',
  active: true,
  deactivatedReason: null,
  lastDelivery: { status: 'DELIVERED', statusCode: 200, at: '2026-11-26T10:00:00.000Z' },
  createdAt: '2026-11-26T09:00:00.000Z',
  ...over,
});

const delivery = (over: Partial<Delivery> = {}): Delivery => ({
  id: 31,
  event: 'run.finished',
  status: 'FAILED',
  attempts: 8,
  lastStatusCode: 503,
  lastError: 'HTTP 503',
  nextAttemptAt: null,
  createdAt: '2026-11-26T10:00:00.000Z',
  deliveredAt: null,
  ...over,
});

const body = (fetchImpl: ReturnType<typeof api>, method: string, path: string) =>
  requests(fetchImpl, method, path).map(([, init]) => JSON.parse(String(init?.body)) as unknown);

/** The section as the project's Settings page mounts it, for a member of that role. */
const section = (role: ProjectRole) => <NotificationsSection projectId={1} role={role} />;

describe('The notifications section of the project settings', () => {
  const routes = (role: string, hooks: Webhook[]) => ({
    '/api/projects/1': () => ({ id: 1, key: 'P', name: 'Shop', role, latestRun: null }),
    '/api/projects/1/notifications/me': () => ({ runFailed: false, newFailures: true }),
    '/api/projects/1/webhooks': () => pageOf(hooks),
  });

  it("lists the project's webhooks with their events, format, state and last delivery", async () => {
    const fetchImpl = api(
      routes('MAINTAINER', [
        webhook(),
        webhook({
          id: 8,
          url: 'https://hooks.slack.com/services/T/B/x',
          format: 'slack',
          events: ['failure.new'],
          active: false,
          deactivatedReason: 'the receiver answered 410 Gone',
          lastDelivery: { status: 'FAILED', statusCode: 410, at: '2026-11-26T10:00:00.000Z' },
        }),
      ]),
    );
    renderAt('/projects/1/settings', '/projects/:projectId/settings', section('MAINTAINER'), fetchImpl);
    const first = await screen.findByRole('article', { name: 'Webhook to https://ci.example.com/hooks/tms' });
    expect(within(first).getByText('run.finished')).toBeTruthy();
    expect(within(first).getByText('run.failed')).toBeTruthy();
    expect(within(first).getByText('active')).toBeTruthy();
    expect(within(first).getByText('signed JSON')).toBeTruthy();
    expect(within(first).getByText('delivered')).toBeTruthy();
    expect(first.textContent).toContain('HTTP 200');
    const slack = screen.getByRole('article', { name: 'Webhook to https://hooks.slack.com/services/T/B/x' });
    expect(within(slack).getByText('off')).toBeTruthy();
    expect(within(slack).getByText('Slack')).toBeTruthy();
    expect(slack.textContent).toContain('Turned off by the service: the receiver answered 410 Gone.');
    expect((within(slack).getByRole('button', { name: /^Test/ }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('adds a webhook and shows its secret once, with Copy; a refused URL shows the reason', async () => {
    const user = userEvent.setup();
    let tries = 0;
    const fetchImpl = api({
      ...routes('OWNER', []),
      'POST /api/projects/1/webhooks': () =>
        ++tries === 1
          ? json(400, {
              status: 400,
              error: 'Bad Request',
              message: "url's host 10.0.0.1 is a private address (RFC 1918); webhooks may not reach it",
            })
          : json(201, { ...webhook(), secret: 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0' }),
    });
    renderAt('/projects/1/settings', '/projects/:projectId/settings', section('OWNER'), fetchImpl);
    expect(await screen.findByText('No webhooks yet.')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Add a webhook' }));
    let form = screen.getByRole('form', { name: 'Add a webhook' });
    // Opened with its first field focused; Escape closes it, as Cancel does.
    expect(document.activeElement).toBe(within(form).getByLabelText('Payload URL'));
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('form', { name: 'Add a webhook' })).toBeNull();
    // The focus back on the button that opened it, not lost to the page.
    await waitFor(() =>
      expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Add a webhook' })),
    );
    await user.click(screen.getByRole('button', { name: 'Add a webhook' }));
    form = screen.getByRole('form', { name: 'Add a webhook' });
    await user.type(within(form).getByLabelText('Payload URL'), 'http://10.0.0.1/hook');
    await user.click(within(form).getByRole('checkbox', { name: /failure\.new/ }));
    await user.click(within(form).getByRole('button', { name: 'Add webhook' }));
    expect((await within(form).findByRole('alert')).textContent).toMatch(/private address/);
    await user.clear(within(form).getByLabelText('Payload URL'));
    await user.type(within(form).getByLabelText('Payload URL'), 'https://ci.example.com/hooks/tms');
    await user.selectOptions(within(form).getByLabelText('Format'), 'slack');
    await user.click(within(form).getByRole('button', { name: 'Add webhook' }));
    const secret = await screen.findByLabelText('Signing secret');
    expect(secret.textContent).toContain('whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0');
    expect(screen.getByRole('button', { name: /Copy/ })).toBeTruthy();
    expect(body(fetchImpl, 'POST', '/api/projects/1/webhooks')[1]).toEqual({
      url: 'https://ci.example.com/hooks/tms',
      events: ['run.finished', 'run.failed', 'failure.new'],
      format: 'slack',
    });
    await user.click(screen.getByRole('button', { name: 'Done' }));
    expect(screen.queryByLabelText('Signing secret')).toBeNull();
  }, 30_000);

  it('tests a webhook and opens its deliveries (in the URL), with status, attempts, response, error and Redeliver', async () => {
    const user = userEvent.setup();
    const fetchImpl = api({
      ...routes('MAINTAINER', [webhook()]),
      'POST /api/webhooks/7/test': () => json(202),
      '/api/webhooks/7/deliveries': () =>
        pageOf([
          delivery(),
          delivery({
            id: 32,
            event: 'ping',
            status: 'DELIVERED',
            attempts: 1,
            lastStatusCode: 200,
            lastError: null,
          }),
          delivery({
            id: 33,
            status: 'PENDING',
            attempts: 2,
            lastStatusCode: null,
            lastError: 'no answer within 10 s',
            nextAttemptAt: '2026-11-26T10:05:00.000Z',
          }),
        ]),
      'POST /api/webhooks/7/deliveries/31/redeliver': () => json(202),
    });
    renderAt('/projects/1/settings', '/projects/:projectId/settings', section('MAINTAINER'), fetchImpl);
    await screen.findByRole(
      'article',
      { name: 'Webhook to https://ci.example.com/hooks/tms' },
      { timeout: 5000 },
    );
    await user.click(screen.getByRole('button', { name: 'Test https://ci.example.com/hooks/tms' }));
    expect(await screen.findByText('A ping is on its way to https://ci.example.com/hooks/tms.')).toBeTruthy();
    expect(requests(fetchImpl, 'POST', '/api/webhooks/7/test')).toHaveLength(1);
    await waitFor(() => expect(where()).toBe('?webhook=7'));
    const table = await screen.findByRole('table', { name: /Deliveries of the webhook/ });
    const [, failed, ping, retrying] = within(table).getAllByRole('row');
    expect(failed.textContent).toContain('run.finished');
    expect(failed.textContent).toContain('failed');
    expect(within(failed).getAllByRole('cell')[2].textContent).toContain('8');
    expect(failed.textContent).toContain('HTTP 503');
    expect(ping.textContent).toContain('delivered');
    // No answer at all: no status code, the error said, and when it is tried again.
    const [, status, attempts, response] = within(retrying).getAllByRole('cell');
    expect(status.textContent).toMatch(/next at/);
    expect(attempts.textContent).toBe('2');
    expect(response.textContent).toBe('—no answer within 10 s');
    await user.click(within(failed).getByRole('button', { name: 'Redeliver delivery 31' }));
    expect(await screen.findByText('Delivery 31 is on its way again.')).toBeTruthy();
    expect(requests(fetchImpl, 'POST', '/api/webhooks/7/deliveries/31/redeliver')).toHaveLength(1);
  }, 30_000);

  it('edits and deletes a webhook', async () => {
    const user = userEvent.setup();
    const fetchImpl = api({
      ...routes('MAINTAINER', [webhook()]),
      'PATCH /api/webhooks/7': () => webhook({ active: false }),
      'DELETE /api/webhooks/7': () => json(204),
    });
    renderAt('/projects/1/settings', '/projects/:projectId/settings', section('MAINTAINER'), fetchImpl);
    await user.click(await screen.findByRole('button', { name: 'Edit https://ci.example.com/hooks/tms' }));
    const form = screen.getByRole('form', { name: 'Edit webhook https://ci.example.com/hooks/tms' });
    await user.click(within(form).getByRole('checkbox', { name: 'Active' }));
    await user.click(within(form).getByRole('checkbox', { name: /run\.failed/ }));
    await user.click(within(form).getByRole('button', { name: 'Save webhook' }));
    await screen.findByText('The webhook to https://ci.example.com/hooks/tms was saved.');
    expect(body(fetchImpl, 'PATCH', '/api/webhooks/7')).toEqual([
      {
        url: 'https://ci.example.com/hooks/tms',
        events: ['run.finished'],
        format: 'standard',
        active: false,
      },
    ]);
    window.confirm = () => true;
    await user.click(screen.getByRole('button', { name: 'Delete https://ci.example.com/hooks/tms' }));
    await screen.findByText('The webhook to https://ci.example.com/hooks/tms was deleted.');
    expect(requests(fetchImpl, 'DELETE', '/api/webhooks/7')).toHaveLength(1);
  }, 30_000);

  it('shows a viewer only their own mail, not the webhooks', async () => {
    const fetchImpl = api(routes('VIEWER', [webhook()]));
    renderAt('/projects/1/settings', '/projects/:projectId/settings', section('VIEWER'), fetchImpl);
    expect(await screen.findByText(/Webhooks are managed by the project's maintainers/)).toBeTruthy();
    expect(requests(fetchImpl, 'GET', '/api/projects/1/webhooks')).toHaveLength(0);
    await waitFor(() =>
      expect((screen.getByRole('checkbox', { name: 'of new failures' }) as HTMLInputElement).checked).toBe(
        true,
      ),
    );
  });
});

describe('Notify me', () => {
  it('saves each box as it is ticked', async () => {
    const user = userEvent.setup();
    let saved = { runFailed: false, newFailures: false };
    const fetchImpl = api({
      '/api/projects/1/notifications/me': () => saved,
      'PUT /api/projects/1/notifications/me': () => (saved = { ...saved, runFailed: true }),
    });
    renderAt('/projects/1', '/projects/:projectId', <NotifyMe projectId={1} compact />, fetchImpl);
    const box = await screen.findByRole('checkbox', { name: 'when a run fails' });
    await waitFor(() => expect((box as HTMLInputElement).disabled).toBe(false));
    expect((box as HTMLInputElement).checked).toBe(false);
    await user.click(box);
    await waitFor(() => expect((box as HTMLInputElement).checked).toBe(true));
    expect(body(fetchImpl, 'PUT', '/api/projects/1/notifications/me')).toEqual([{ runFailed: true }]);
    expect(screen.getByRole('group', { name: 'Notify me by mail' })).toBeTruthy();
  });

  it('shows a box ticked in the render of the click, and puts it back when the change is refused', async () => {
    const fetchImpl = api({
      '/api/projects/1/notifications/me': () => ({ runFailed: false, newFailures: false }),
      'PUT /api/projects/1/notifications/me': () =>
        json(403, { status: 403, error: 'Forbidden', message: 'Not a member of this project' }),
    });
    renderAt('/projects/1', '/projects/:projectId', <NotifyMe projectId={1} compact />, fetchImpl);
    const box = (await screen.findByRole('checkbox', { name: 'of new failures' })) as HTMLInputElement;
    await waitFor(() => expect(box.disabled).toBe(false));
    fireEvent.click(box);
    // No wait: the click's own render shows it.
    expect(box.checked).toBe(true);
    expect(await screen.findByText('Not a member of this project')).toBeTruthy();
    await waitFor(() => expect(box.checked).toBe(false));
  });
});
