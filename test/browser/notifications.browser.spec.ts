import { type ApiCall, WebHarness, WIDTHS } from './harness.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Issue #39 in Chromium against the built service: a project's notifications in its settings (webhooks with their
 * last delivery, adding one with its secret shown once, a test ping and the deliveries with Redeliver) and "Notify
 * me" on the project page, at 1280 and 390 px. The receiver is on this machine, so private addresses are allowed.
 */
describe('Notifications, in the browser', () => {
  const receiver = new WebhookReceiver();
  const ui = new WebHarness({
    SVC_WEBHOOK_ALLOW_PRIVATE: 'true',
    SVC_WEBHOOK_RETRY_BASE: '600s',
    SVC_WEBHOOK_TIMEOUT: '2s',
  });
  let api: ApiCall;
  let projectId: number;

  beforeAll(async () => {
    await receiver.start();
    receiver.script('/down', () => 503);
    api = await ui.api();
    projectId = (await api('POST', '/api/projects', { key: 'HOOKS', name: 'Checkout service' }))!.id;
    const down = (await api('POST', `/api/projects/${projectId}/webhooks`, {
      url: receiver.url('/down'),
      events: ['run.failed', 'failure.new'],
    }))!;
    await api('POST', `/api/webhooks/${down.id}/test`);
    await api('POST', `/api/projects/${projectId}/webhooks`, {
      url: receiver.url('/slack'),
      events: ['run.finished'],
      format: 'slack',
    });
    const run = (await api('POST', `/api/projects/${projectId}/runs`, { name: 'nightly #1207' }))!;
    await api('POST', `/api/runs/${run.id}/results`, {
      results: [{ name: 'pays by card', status: 'FAILED' }],
    });
    await api('POST', `/api/runs/${run.id}/finish`, {});
    // Both have been tried once before the page is looked at.
    const deadline = Date.now() + 20_000;
    while (receiver.received.length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  afterAll(() => receiver.close());

  it('lists the webhooks, adds one with its secret shown once, tests it and shows its deliveries', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}/settings`);
    const down = page.getByRole('article', { name: `Webhook to ${receiver.url('/down')}` });
    await down.getByText('failed').or(down.getByText('pending')).first().waitFor();
    await down.getByText('HTTP 503').waitFor();
    await page
      .getByRole('article', { name: `Webhook to ${receiver.url('/slack')}` })
      .getByText('delivered')
      .waitFor();
    await ui.check(page, 'notifications-webhooks');

    await page.getByRole('button', { name: 'Add a webhook' }).click();
    const form = page.getByRole('form', { name: 'Add a webhook' });
    await form.getByLabel('Payload URL').fill(receiver.url('/new'));
    await form.getByRole('checkbox', { name: /test\.flaky/ }).check();
    await form.getByRole('button', { name: 'Add webhook' }).click();
    const secret = page.getByLabel('Signing secret');
    await secret.waitFor();
    expect(await secret.textContent()).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    await page.getByRole('button', { name: /Copy/ }).waitFor();
    await ui.check(page, 'notifications-secret');
    await page.getByRole('button', { name: 'Done' }).click();

    await page.getByRole('button', { name: `Test ${receiver.url('/new')}` }).click();
    const table = page.getByRole('table', { name: /Deliveries of the webhook/ });
    await table.getByText('delivered').waitFor();
    // The webhook's own last delivery follows what its deliveries say.
    await page
      .getByRole('article', { name: `Webhook to ${receiver.url('/new')}` })
      .getByText('delivered')
      .waitFor();
    expect(new URL(page.url()).searchParams.get('webhook')).not.toBeNull();
    expect(receiver.on('/new').map((r) => r.json.type)).toEqual(['ping']);
    await table.getByRole('button', { name: /^Redeliver delivery/ }).click();
    await page.getByText(/is on its way again/).waitFor();
    await ui.check(page, 'notifications-deliveries');

    await page.getByRole('button', { name: `Deliveries of ${receiver.url('/down')}` }).click();
    const failing = page.getByRole('table', { name: /Deliveries of the webhook/ });
    await failing.getByText('HTTP 503').first().waitFor();
    await ui.check(page, 'notifications-failing');
    // On a phone each delivery is stacked, its answer and Redeliver in view without scrolling the table sideways.
    await page.setViewportSize(WIDTHS.phone);
    for (const part of [
      failing.getByText('HTTP 503').first(),
      failing.getByRole('button', { name: /^Redeliver/ }).first(),
    ]) {
      const box = (await part.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(WIDTHS.phone.width);
    }
    await page.setViewportSize(WIDTHS.desktop);
  }, 120_000);

  it('lets a member ask for mail on the project page', async () => {
    const page = await ui.adminPage();
    await page.goto(`${ui.base}/projects/${projectId}`);
    const box = page
      .getByRole('group', { name: 'Notify me by mail' })
      .getByRole('checkbox', { name: 'when a run fails' });
    await box.waitFor();
    await box.check();
    await page.reload();
    await page.getByRole('group', { name: 'Notify me by mail' }).waitFor();
    await page.locator('input:checked').first().waitFor();
    expect(await page.getByRole('checkbox', { name: 'when a run fails' }).isChecked()).toBe(true);
    await ui.check(page, 'notifications-notify-me');
  }, 60_000);
});
