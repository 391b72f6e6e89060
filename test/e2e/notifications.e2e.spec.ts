import { createHmac } from 'node:crypto';
import { EventEmitter2 } from '@nestjs/event-emitter';
import request from 'supertest';
import { NOTIFY, type NotifyEvent } from '../../src/notifications/notification.events.js';
import { insertUser } from '../factories/user.factory.js';
import { RunningApp, TestDeployment } from '../support/app.js';
import { createProject, eventually, login } from '../support/http.js';
import { TestRelay } from '../support/smtp.js';
import { Received, WebhookReceiver } from '../support/webhook-receiver.js';

/** Standard Webhooks' signature, written out here from the specification, apart from the service's code. */
function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.split('_')[1], 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function expectSigned(r: Received, secret: string): void {
  const id = r.headers['webhook-id'] as string;
  const timestamp = r.headers['webhook-timestamp'] as string;
  expect(id).toMatch(/^msg_[0-9a-f]{32}$/);
  expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(300);
  expect(r.headers['webhook-signature']).toBe(expectedSignature(secret, id, timestamp, r.body));
}

interface Delivery {
  id: number;
  event: string;
  status: string;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
}

describe('Notifications: webhooks through a local receiver, and mail', () => {
  const receiver = new WebhookReceiver();
  const relay = new TestRelay();
  let deployment: TestDeployment;
  let svc: RunningApp;
  let owner: string;
  let maintainer: string;
  let viewer: string;
  let viewerEmail: string;
  let projectId: number;
  let otherProjectId: number;

  const as = (token: string) => ({
    get: (path: string) => request(svc.url).get(path).set('Authorization', `Bearer ${token}`),
    post: (path: string, body: object = {}) =>
      request(svc.url).post(path).set('Authorization', `Bearer ${token}`).send(body),
    patch: (path: string, body: object) =>
      request(svc.url).patch(path).set('Authorization', `Bearer ${token}`).send(body),
    put: (path: string, body: object) =>
      request(svc.url).put(path).set('Authorization', `Bearer ${token}`).send(body),
    delete: (path: string) => request(svc.url).delete(path).set('Authorization', `Bearer ${token}`),
  });

  async function webhook(path: string, body: object = {}) {
    const res = await as(maintainer)
      .post(`/api/projects/${projectId}/webhooks`, {
        url: receiver.url(path),
        events: ['run.finished'],
        ...body,
      })
      .expect(201);
    return res.body as { id: number; secret: string; url: string; active: boolean };
  }

  async function finishedRun(name = 'nightly', statuses: string[] = ['PASSED', 'FAILED']) {
    const run = (await as(maintainer).post(`/api/projects/${projectId}/runs`, { name }).expect(201)).body as {
      id: number;
    };
    const results = statuses.map((status, i) => ({ name: `t${i}`, suite: 'S', status }));
    await as(maintainer).post(`/api/runs/${run.id}/results`, { results }).expect(201);
    await as(maintainer).post(`/api/runs/${run.id}/finish`).expect(200);
    return run.id;
  }

  const deliveries = async (webhookId: number) =>
    (await as(maintainer).get(`/api/webhooks/${webhookId}/deliveries`).expect(200)).body
      .content as Delivery[];

  const settled = (webhookId: number, n = 1) =>
    eventually(async () => {
      const list = await deliveries(webhookId);
      return list.length >= n && list.every((d) => d.status !== 'PENDING') ? list : undefined;
    }, 30_000);

  beforeAll(async () => {
    await receiver.start();
    await relay.start();
    deployment = new TestDeployment({
      SVC_WEBHOOK_ALLOW_PRIVATE: 'true',
      SVC_WEBHOOK_RETRY_BASE: '1s',
      SVC_WEBHOOK_TIMEOUT: '1s',
      ...relay.env(),
    });
    [svc] = await deployment.start();
    const users = await Promise.all([0, 1, 2].map(() => insertUser(svc.dataSource)));
    [owner, maintainer, viewer] = await Promise.all(
      users.map(async (u) => (await login(svc.url, u.email, u.password)).accessToken),
    );
    viewerEmail = users[2].email;
    projectId = await createProject(svc.url, owner, { key: 'NOTIFY', name: 'Notify' });
    otherProjectId = await createProject(svc.url, maintainer, { key: 'OTHER', name: 'Other' });
    await as(owner)
      .put(`/api/projects/${projectId}/members/${users[1].id}`, { role: 'MAINTAINER' })
      .expect(200);
    await as(owner).put(`/api/projects/${projectId}/members/${users[2].id}`, { role: 'VIEWER' }).expect(200);
  });
  afterAll(async () => {
    await deployment.stop();
    await receiver.close();
    await relay.close();
  });

  it('creates a webhook with a whsec_ secret shown once and stored encrypted, lists and changes it without the secret', async () => {
    const created = await webhook('/crud', { events: ['run.finished', 'run.failed'], active: false });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(24);
    expect(created).toMatchObject({
      url: receiver.url('/crud'),
      events: ['run.finished', 'run.failed'],
      format: 'standard',
      active: false,
    });
    const [stored]: { secret_encrypted: string }[] = await svc.dataSource.query(
      `SELECT secret_encrypted FROM webhooks WHERE id = $1`,
      [created.id],
    );
    expect(stored.secret_encrypted).toMatch(/^v1:/);
    expect(stored.secret_encrypted).not.toContain(created.secret.slice(6));

    const list = (await as(maintainer).get(`/api/projects/${projectId}/webhooks`).expect(200)).body;
    const listed = list.content.find((w: { id: number }) => w.id === created.id);
    expect(listed).toMatchObject({ id: created.id, active: false, lastDelivery: null });
    expect(JSON.stringify(list)).not.toContain('whsec_');

    const changed = await as(maintainer)
      .patch(`/api/webhooks/${created.id}`, { format: 'slack', events: ['ping'] })
      .expect(200);
    expect(changed.body).toMatchObject({ format: 'slack', events: ['ping'], active: false });
    expect(changed.body.secret).toBeUndefined();
    await as(maintainer).delete(`/api/webhooks/${created.id}`).expect(204);
    await as(maintainer).get(`/api/webhooks/${created.id}`).expect(404);
    // Audit records are written after the answer (AUDIT_EVENT): each comes, in order.
    const audit = await eventually(async () => {
      const rows: { type: string }[] = await svc.dataSource.query(
        `SELECT type FROM audit_events WHERE type LIKE 'WEBHOOK_%' ORDER BY id`,
      );
      return rows.length >= 3 ? rows.map((a) => a.type) : undefined;
    });
    expect(audit).toEqual(expect.arrayContaining(['WEBHOOK_CREATED', 'WEBHOOK_UPDATED', 'WEBHOOK_DELETED']));
  });

  it('refuses a bad URL, an unknown event and an empty list with 400 naming it; hides another project and needs MAINTAINER', async () => {
    const create = (body: object) => as(maintainer).post(`/api/projects/${projectId}/webhooks`, body);
    const bad = await create({ url: 'not a url', events: ['run.finished'] }).expect(400);
    expect(bad.body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(/url/) });
    expect(
      (await create({ url: 'ftp://127.0.0.1/x', events: ['run.finished'] }).expect(400)).body.message,
    ).toMatch(/http or https/);
    expect(
      (await create({ url: receiver.url('/x'), events: ['run.exploded'] }).expect(400)).body.message,
    ).toMatch(/events: unknown event 'run\.exploded'/);
    expect((await create({ url: receiver.url('/x'), events: [] }).expect(400)).body.message).toMatch(
      /events must list at least one/,
    );
    expect(
      (await create({ url: receiver.url('/x'), events: ['ping'], secret: 'mine' }).expect(400)).body.message,
    ).toMatch(/secret/);
    await as(viewer)
      .post(`/api/projects/${projectId}/webhooks`, { url: receiver.url('/x'), events: ['ping'] })
      .expect(403);
    // A change is validated as a creation is, and a refused one changes nothing.
    const mine = await webhook('/unchanged', { events: ['run.finished', 'ping'] });
    const change = (body: object) => as(maintainer).patch(`/api/webhooks/${mine.id}`, body);
    expect((await change({ events: ['run.exploded'] }).expect(400)).body.message).toMatch(
      /events: unknown event 'run\.exploded'/,
    );
    expect((await change({ events: [] }).expect(400)).body.message).toMatch(/events must list at least one/);
    expect((await change({ url: 'not a url' }).expect(400)).body.message).toMatch(/url/);
    expect((await change({ format: 'teams' }).expect(400)).body.message).toMatch(/format/);
    // A field left out stays as it is; null is no value for any of them (it was a 500 for url and events).
    for (const [field, message] of [
      ['url', /url must be a string/],
      ['events', /events must be a list of event names/],
      ['format', /format must be standard or slack/],
      ['active', /active must be true or false/],
    ] as const) {
      expect((await change({ [field]: null }).expect(400)).body).toEqual({
        status: 400,
        error: 'Bad Request',
        message: expect.stringMatching(message),
      });
    }
    expect(
      (await create({ url: receiver.url('/x'), events: ['ping'], active: null }).expect(400)).body.message,
    ).toMatch(/active must be true or false/);
    expect((await as(maintainer).get(`/api/webhooks/${mine.id}`).expect(200)).body).toMatchObject({
      url: receiver.url('/unchanged'),
      events: ['run.finished', 'ping'],
      format: 'standard',
      active: true,
    });

    const theirs = (
      await as(maintainer)
        .post(`/api/projects/${otherProjectId}/webhooks`, { url: receiver.url('/other'), events: ['ping'] })
        .expect(201)
    ).body;
    // The owner of this project is no member of the other one: its webhook does not exist for them.
    await as(owner).get(`/api/webhooks/${theirs.id}`).expect(404);
    await as(owner).patch(`/api/webhooks/${theirs.id}`, { active: false }).expect(404);
    await as(owner).post(`/api/webhooks/${theirs.id}/test`).expect(404);
    await as(owner).get(`/api/webhooks/${theirs.id}/deliveries`).expect(404);
    await as(owner).delete(`/api/webhooks/${theirs.id}`).expect(404);
    await as(maintainer).post(`/api/webhooks/${theirs.id}/test`).expect(202);
    const [ping] = (await as(maintainer).get(`/api/webhooks/${theirs.id}/deliveries`).expect(200)).body
      .content as Delivery[];
    await as(owner).post(`/api/webhooks/${theirs.id}/deliveries/${ping.id}/redeliver`).expect(404);
    // Nor is a delivery redelivered through a webhook it is not of.
    await as(maintainer).post(`/api/webhooks/${mine.id}/deliveries/${ping.id}/redeliver`).expect(404);
    await as(viewer).get(`/api/projects/${projectId}/webhooks`).expect(403);
  });

  it('delivers run.finished signed as Standard Webhooks say, once however often the run is finished', async () => {
    const hook = await webhook('/signed');
    const runId = await finishedRun('signed run');
    await as(maintainer).post(`/api/runs/${runId}/finish`).expect(200);
    const [delivery] = await settled(hook.id);
    expect(delivery).toMatchObject({
      event: 'run.finished',
      status: 'DELIVERED',
      attempts: 1,
      lastStatusCode: 200,
      lastError: null,
    });
    // A ping after it, as a barrier: once it is in, nothing of the run is still on its way.
    await as(maintainer).post(`/api/webhooks/${hook.id}/test`).expect(202);
    await settled(hook.id, 2);
    const got = receiver.on('/signed');
    expect(got.map((r) => r.json.type)).toEqual(['run.finished', 'ping']);
    const [first] = got;
    expectSigned(first, hook.secret);
    expect(first.headers['content-type']).toBe('application/json');
    expect(first.json).toMatchObject({
      type: 'run.finished',
      id: first.headers['webhook-id'],
      projectId,
      data: {
        run: { id: runId, name: 'signed run', counts: { total: 2, passed: 1, failed: 1 } },
        url: expect.stringMatching(new RegExp(`/runs/${runId}$`)),
      },
    });
    expect(new Date(first.json.timestamp as string).toISOString()).toBe(first.json.timestamp);
    expectSigned(got[1], hook.secret);
    const listed = (await as(maintainer).get(`/api/projects/${projectId}/webhooks`).expect(200)).body.content;
    expect(listed.find((w: { id: number }) => w.id === hook.id).lastDelivery).toMatchObject({
      status: 'DELIVERED',
      statusCode: 200,
    });
  });

  it('retries after 500s with the same webhook-id and a fresh signature, until a 2xx', async () => {
    receiver.script('/flaky', (n) => (n < 2 ? 500 : 204));
    const hook = await webhook('/flaky');
    await finishedRun('retried');
    const [delivery] = await settled(hook.id);
    expect(delivery).toMatchObject({
      status: 'DELIVERED',
      attempts: 3,
      lastStatusCode: 204,
      lastError: null,
    });
    const got = receiver.on('/flaky');
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    got.forEach((r) => expectSigned(r, hook.secret));
  });

  it('retries an attempt that got no answer within the timeout, with the same webhook-id', async () => {
    receiver.script('/slow', (n) => (n === 0 ? 'hang' : 200));
    const hook = await webhook('/slow');
    await finishedRun('timed out');
    const [delivery] = await settled(hook.id);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 2, lastStatusCode: 200 });
    const got = receiver.on('/slow');
    expect(got).toHaveLength(2);
    expect(got[0].headers['webhook-id']).toBe(got[1].headers['webhook-id']);
  });

  it('records a failed attempt with its status and error, and gives up after 8 attempts', async () => {
    receiver.script('/down', () => 503);
    const hook = await webhook('/down');
    await finishedRun('down');
    const first = await eventually(async () => {
      const [d] = await deliveries(hook.id);
      return d?.attempts === 1 ? d : undefined;
    });
    expect(first).toMatchObject({ status: 'PENDING', lastStatusCode: 503, lastError: 'HTTP 503' });
    expect(first).toHaveProperty('nextAttemptAt', expect.any(String));
    // Skip the backoff, between two attempts (not while one is on its way): the eighth attempt is the last.
    await eventually(async () => {
      const [rows]: [unknown[], number] = await svc.dataSource.query(
        `UPDATE webhook_deliveries SET attempts = 7, next_attempt_at = now() WHERE webhook_id = $1 AND locked_until IS NULL RETURNING id`,
        [hook.id],
      );
      return rows.length ? true : undefined;
    });
    const [last] = await settled(hook.id);
    expect(last).toMatchObject({ status: 'FAILED', attempts: 8, lastStatusCode: 503 });
  });

  it('follows no redirect: a 3xx is a failed attempt, retried at the same address', async () => {
    receiver.script('/moved', (n) =>
      n < 2 ? { status: 302, headers: { location: receiver.url('/moved-here') } } : 204,
    );
    receiver.script('/moved-here', () => 204);
    const hook = await webhook('/moved');
    await finishedRun('moved');
    const [delivery] = await settled(hook.id);
    expect(delivery).toMatchObject({ status: 'DELIVERED', attempts: 3, lastStatusCode: 204 });
    expect(receiver.on('/moved')).toHaveLength(3);
    expect(receiver.on('/moved-here')).toEqual([]);
  });

  it('turns a webhook off on 410 Gone, audited, and sends it nothing more', async () => {
    receiver.script('/gone', () => 410);
    const hook = await webhook('/gone');
    await finishedRun('gone');
    const [delivery] = await settled(hook.id);
    expect(delivery).toMatchObject({ status: 'FAILED', attempts: 1, lastStatusCode: 410 });
    // The webhook is turned off just after the delivery's failure is recorded (a transaction of its own).
    const after = await eventually(async () => {
      const body = (await as(maintainer).get(`/api/webhooks/${hook.id}`).expect(200)).body as {
        active: boolean;
      };
      return body.active ? undefined : body;
    });
    expect(after).toMatchObject({ active: false, deactivatedReason: expect.stringMatching(/410/) });
    const audit = await eventually(async () => {
      const rows: { details: { webhookId: number; reason: string } }[] = await svc.dataSource.query(
        `SELECT details FROM audit_events WHERE type = 'WEBHOOK_DEACTIVATED'`,
      );
      return rows.find((r) => r.details.webhookId === hook.id);
    });
    expect(audit.details.reason).toMatch(/410/);
    await as(maintainer).post(`/api/webhooks/${hook.id}/test`).expect(409);
    await finishedRun('after gone');
    expect((await deliveries(hook.id)).length).toBe(1);
  });

  it('turns off a webhook failing for 24 hours in a row and mails the project OWNERs', async () => {
    receiver.script('/dead', () => 500);
    const hook = await webhook('/dead');
    await svc.dataSource.query(
      `UPDATE webhooks SET failing_since = now() - interval '25 hours' WHERE id = $1`,
      [hook.id],
    );
    await as(maintainer).post(`/api/webhooks/${hook.id}/test`).expect(202);
    const off = await eventually(async () => {
      const w = (await as(maintainer).get(`/api/webhooks/${hook.id}`).expect(200)).body;
      return w.active ? undefined : w;
    });
    expect(off.deactivatedReason).toMatch(/24 hours/);
    const ownerEmail: { email: string }[] = await svc.dataSource.query(
      `SELECT u.email FROM users u JOIN project_members m ON m.user_id = u.id WHERE m.project_id = $1 AND m.role = 'OWNER'`,
      [projectId],
    );
    const [mail] = await eventually(async () => {
      const m = relay.to(ownerEmail[0].email).filter((x) => /webhook/.test(x.subject));
      return m.length ? m : undefined;
    });
    expect(mail.text).toContain(receiver.url('/dead'));
    expect(mail.text).toMatch(/24 hours/);
    const audit = await eventually(async () => {
      const rows: { details: { webhookId: number; reason: string } }[] = await svc.dataSource.query(
        `SELECT details FROM audit_events WHERE type = 'WEBHOOK_DEACTIVATED'`,
      );
      return rows.find((r) => r.details.webhookId === hook.id);
    });
    expect(audit.details.reason).toMatch(/24 hours/);
  });

  it('redelivers a delivery with its original webhook-id, and sends a test ping whatever the events', async () => {
    const hook = await webhook('/again', { events: ['run.failed'] });
    await as(maintainer).post(`/api/webhooks/${hook.id}/test`).expect(202);
    const [ping] = await settled(hook.id);
    expect(ping).toMatchObject({ event: 'ping', status: 'DELIVERED' });
    await as(maintainer).post(`/api/webhooks/${hook.id}/deliveries/${ping.id}/redeliver`).expect(202);
    await eventually(async () => (receiver.on('/again').length === 2 ? true : undefined));
    const [a, b] = receiver.on('/again');
    expect(a.json).toMatchObject({ type: 'ping', projectId, data: { webhookId: hook.id } });
    expect(b.headers['webhook-id']).toBe(a.headers['webhook-id']);
    expect(b.body).toBe(a.body);
    expectSigned(b, hook.secret);
    expect((await settled(hook.id))[0]).toMatchObject({ id: ping.id, status: 'DELIVERED', attempts: 1 });
    await as(maintainer).post(`/api/webhooks/${hook.id}/deliveries/999999/redeliver`).expect(404);
  });

  it('posts a Slack message, unsigned: text and blocks with the run, its counts, its gate and a link', async () => {
    const hook = await webhook('/slack', { format: 'slack' });
    const runId = await finishedRun('nightly 42', ['PASSED', 'FAILED', 'BROKEN', 'SKIPPED']);
    await settled(hook.id);
    const [got] = receiver.on('/slack');
    expect(got.headers['webhook-signature']).toBeUndefined();
    expect(Object.keys(got.json).sort()).toEqual(['blocks', 'text']);
    expect(got.json.text).toMatch(/nightly 42/);
    const blocks = got.json.blocks as {
      type: string;
      text?: { text: string };
      fields?: { text: string }[];
    }[];
    expect(blocks[0]).toMatchObject({ type: 'header', text: { text: expect.stringMatching(/nightly 42/) } });
    const fields = blocks.flatMap((b) => b.fields ?? []).map((f) => f.text);
    expect(fields).toEqual(
      expect.arrayContaining([
        '*Tests*\n4',
        '*Passed*\n1',
        '*Failed*\n2',
        '*Skipped*\n1',
        expect.stringMatching(/^\*Gate\*/),
      ]),
    );
    expect(blocks.some((b) => b.text?.text.includes(`/runs/${runId}|`))).toBe(true);
  });

  it('lists a failure.new of many signatures as its first 100 and their count, within 256 KiB', async () => {
    const hook = await webhook('/new', { events: ['failure.new'] });
    const runId = await finishedRun('many new');
    const signatures = Array.from({ length: 1500 }, (_, i) => ({
      id: i + 1,
      testName: `test ${i}`,
      message: 'x'.repeat(3000),
    }));
    const event: NotifyEvent = {
      type: 'failure.new',
      projectId: String(projectId),
      runId: String(runId),
      data: { signatures },
    };
    svc.app.get(EventEmitter2).emit(NOTIFY, event);
    await settled(hook.id);
    const [got] = receiver.on('/new');
    expect(Buffer.byteLength(got.body)).toBeLessThanOrEqual(256 * 1024);
    const data = got.json.data as { count: number; signatures: { id: number }[] };
    expect(data.count).toBe(1500);
    expect(data.signatures).toHaveLength(100);
    expect(data.signatures[0].id).toBe(1);
  });

  it('mails members who asked: run-failed and new-failures, once a run each, with an unsubscribe line', async () => {
    const me = as(viewer);
    expect((await me.get(`/api/projects/${projectId}/notifications/me`).expect(200)).body).toEqual({
      runFailed: false,
      newFailures: false,
    });
    expect(
      (await me.put(`/api/projects/${projectId}/notifications/me`, { runFailed: true }).expect(200)).body,
    ).toEqual({
      runFailed: true,
      newFailures: false,
    });
    await me.put(`/api/projects/${projectId}/notifications/me`, { newFailures: true }).expect(200);
    expect((await me.get(`/api/projects/${projectId}/notifications/me`).expect(200)).body).toEqual({
      runFailed: true,
      newFailures: true,
    });
    expect(
      (await me.put(`/api/projects/${projectId}/notifications/me`, { runFailed: 'yes' }).expect(400)).body
        .message,
    ).toMatch(/runFailed/);
    expect(
      (await me.put(`/api/projects/${projectId}/notifications/me`, { newFailures: null }).expect(400)).body
        .message,
    ).toMatch(/newFailures must be true or false/);
    await as(viewer).get(`/api/projects/${otherProjectId}/notifications/me`).expect(404);

    const runId = await finishedRun('gate run');
    const emitter = svc.app.get(EventEmitter2);
    const failed: NotifyEvent = {
      type: 'run.failed',
      projectId: String(projectId),
      runId: String(runId),
      data: {
        gate: {
          status: 'FAILED',
          conditions: [{ name: 'maxFailed', expected: 0, actual: 1, passed: false }],
        },
      },
    };
    const fresh: NotifyEvent = {
      type: 'failure.new',
      projectId: String(projectId),
      runId: String(runId),
      data: { signatures: [{ id: 9, testName: 'S t1' }] },
    };
    // Twice each, as two replicas evaluating one run might.
    emitter.emit(NOTIFY, failed);
    emitter.emit(NOTIFY, fresh);
    emitter.emit(NOTIFY, failed);
    emitter.emit(NOTIFY, fresh);
    const mails = await eventually(async () => {
      const m = relay.to(viewerEmail);
      return m.length >= 2 ? m : undefined;
    });
    const gate = mails.find((m) => /quality gate/.test(m.subject))!;
    expect(gate.subject).toMatch(/gate run/);
    expect(gate.text).toMatch(/maxFailed: expected 0, was 1/);
    expect(gate.text).toContain(`/runs/${runId}`);
    expect(gate.text).toMatch(
      new RegExp(`turn off "Notify me" at \\S+/projects/${projectId}/settings#notifications`),
    );
    const news = mails.find((m) => /new failure/.test(m.subject))!;
    expect(news.text).toContain('- S t1');
    expect(news.text).toMatch(/Notify me/);
    // One of each, recorded once: the repeats found them sent.
    const sent: { kind: string }[] = await svc.dataSource.query(
      `SELECT kind FROM notification_mails WHERE run_id = $1 ORDER BY kind`,
      [runId],
    );
    expect(sent.map((s) => s.kind)).toEqual(['new-failures', 'run-failed']);
    const queued: { n: number }[] = await svc.dataSource.query(
      `SELECT count(*)::int AS n FROM mail_outbox WHERE recipient = $1 AND kind IN ('run-failed', 'new-failures')`,
      [viewerEmail],
    );
    expect(queued[0].n).toBe(2);
  });

  it('delivers test.flaky when results make a test flaky, and test.quarantined when a maintainer quarantines it', async () => {
    const hook = await webhook('/health', { events: ['test.flaky', 'test.quarantined'] });
    const v1 = async (status: string) => {
      const run = (
        await as(maintainer)
          .post(`/api/projects/${projectId}/runs`, { name: 'health', attributes: { commit: 'abc' } })
          .expect(201)
      ).body as { id: number };
      await as(maintainer)
        .post(`/api/runs/${run.id}/results`, { results: [{ name: 'wobbly', suite: 'H', status }] })
        .expect(201);
      await as(maintainer).post(`/api/runs/${run.id}/finish`).expect(200);
      return run.id;
    };
    await v1('PASSED');
    const flipped = await v1('FAILED');
    const [flaky] = await settled(hook.id);
    expect(flaky).toMatchObject({ event: 'test.flaky', status: 'DELIVERED' });
    const [got] = receiver.on('/health');
    expectSigned(got, hook.secret);
    const test = (got.json.data as { test: { id: number; name: string; state: string } }).test;
    expect(got.json).toMatchObject({
      type: 'test.flaky',
      projectId,
      data: { runId: flipped, test: { name: 'wobbly', suite: 'H', state: 'FLAKY' } },
    });
    expect((got.json.data as { url: string }).url).toMatch(
      new RegExp(`/projects/${projectId}/tests/${test.id}$`),
    );

    await as(maintainer)
      .put(`/api/projects/${projectId}/tests/${test.id}/quarantine`, { reason: 'flips on staging' })
      .expect(200);
    await settled(hook.id, 2);
    const quarantined = receiver.on('/health')[1];
    expect(quarantined.json).toMatchObject({
      type: 'test.quarantined',
      data: {
        runId: null,
        test: { id: test.id, state: 'QUARANTINED', quarantine: { reason: 'flips on staging', auto: false } },
      },
    });
  });

  it('counts deliveries by result and the due backlog in /metrics', async () => {
    const text = (await request(svc.url).get('/metrics').expect(200)).text;
    expect(text).toMatch(/tms_webhook_deliveries_total\{result="delivered"\} [1-9]/);
    expect(text).toMatch(/tms_webhook_deliveries_total\{result="retrying"\} [1-9]/);
    expect(text).toMatch(/tms_webhook_outbox_due \d+/);
  });
});

describe('Notifications: private addresses refused', () => {
  const receiver = new WebhookReceiver();
  const deployment = new TestDeployment({ SVC_WEBHOOK_RETRY_BASE: '1s', SVC_WEBHOOK_TIMEOUT: '1s' });
  let svc: RunningApp;
  let token: string;
  let projectId: number;

  beforeAll(async () => {
    await receiver.start();
    [svc] = await deployment.start();
    const user = await insertUser(svc.dataSource);
    token = (await login(svc.url, user.email, user.password)).accessToken;
    projectId = await createProject(svc.url, token, { key: 'SSRF', name: 'ssrf' });
  });
  afterAll(async () => {
    await deployment.stop();
    await receiver.close();
  });

  it.each([
    ['loopback', 'http://127.0.0.1:8080/hook', /loopback/],
    ['loopback, another of 127/8', 'http://127.1.2.3/hook', /loopback/],
    ['RFC 1918', 'http://10.1.2.3/hook', /private/],
    ['RFC 1918 (192.168)', 'https://192.168.0.10/hook', /private/],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data', /metadata/],
    ['link-local', 'http://169.254.10.10/x', /link-local/],
    ['CGNAT', 'http://100.64.0.1/x', /CGNAT/],
    ['an IPv6 ULA', 'http://[fd12:3456::1]/hook', /ULA/],
    ['IPv6 loopback', 'http://[::1]:8080/hook', /loopback/],
    ['IPv6 link-local', 'http://[fe80::1]/hook', /link-local/],
    ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/hook', /loopback/],
    ['IPv4-mapped metadata', 'http://[::ffff:169.254.169.254]/hook', /metadata/],
    ['unspecified', 'http://0.0.0.0:8080/', /unspecified/],
    ['a name resolving to loopback', 'http://localhost:8080/hook', /localhost resolves to .*loopback/],
  ])('refuses %s at creation with 400', async (_what, url, why) => {
    const res = await request(svc.url)
      .post(`/api/projects/${projectId}/webhooks`)
      .set('Authorization', `Bearer ${token}`)
      .send({ url, events: ['run.finished'] })
      .expect(400);
    expect(res.body).toEqual({ status: 400, error: 'Bad Request', message: expect.stringMatching(why) });
  });

  /**
   * A webhook made while its host was public (a documentation address, never contacted: it is off), then pointed at
   * `url` underneath, as after a DNS change, and pinged; its first delivery once `ready` says so.
   */
  async function pingedAt(url: string, ready: (d: Delivery) => boolean): Promise<Delivery> {
    const created = await request(svc.url)
      .post(`/api/projects/${projectId}/webhooks`)
      .set('Authorization', `Bearer ${token}`)
      .send({ url: 'https://203.0.113.10/hook', events: ['ping'], active: false })
      .expect(201);
    await svc.dataSource.query(`UPDATE webhooks SET url = $2, active = true WHERE id = $1`, [
      created.body.id,
      url,
    ]);
    await request(svc.url)
      .post(`/api/webhooks/${created.body.id}/test`)
      .set('Authorization', `Bearer ${token}`)
      .expect(202);
    const delivery = await eventually(async () => {
      const [d] = (
        await request(svc.url)
          .get(`/api/webhooks/${created.body.id}/deliveries`)
          .set('Authorization', `Bearer ${token}`)
          .expect(200)
      ).body.content as Delivery[];
      return d && ready(d) ? d : undefined;
    }, 15_000);
    // Turned off again, so that no retry goes on past the test.
    await svc.dataSource.query(`UPDATE webhooks SET active = false WHERE id = $1`, [created.body.id]);
    return delivery;
  }

  it('refuses a change of a webhook to a private address with 400, and keeps its address', async () => {
    const created = await request(svc.url)
      .post(`/api/projects/${projectId}/webhooks`)
      .set('Authorization', `Bearer ${token}`)
      .send({ url: 'https://203.0.113.12/hook', events: ['ping'], active: false })
      .expect(201);
    const res = await request(svc.url)
      .patch(`/api/webhooks/${created.body.id}`)
      .set('Authorization', `Bearer ${token}`)
      .send({ url: 'http://169.254.169.254/latest/meta-data' })
      .expect(400);
    expect(res.body.message).toMatch(/metadata/);
    const after = await request(svc.url)
      .get(`/api/webhooks/${created.body.id}`)
      .set('Authorization', `Bearer ${token}`)
      .expect(200);
    expect(after.body.url).toBe('https://203.0.113.12/hook');
  });

  it('retries at send time a URL whose host does not resolve (a resolver outage passes), unlike a refused one', async () => {
    // .invalid never resolves (RFC 6761).
    const delivery = await pingedAt('http://hooks.tms-e2e.invalid/hook', (d) => d.attempts === 1);
    expect(delivery).toMatchObject({
      status: 'PENDING',
      lastStatusCode: null,
      lastError: expect.stringMatching(/hooks\.tms-e2e\.invalid (does not|did not) resolve/),
      nextAttemptAt: expect.any(String),
    });
  });

  it('refuses at send time a URL whose host now resolves to loopback: a failed delivery, nothing sent', async () => {
    const delivery = await pingedAt(receiver.url('/private', 'localhost'), (d) => d.status === 'FAILED');
    expect(delivery).toMatchObject({
      attempts: 1,
      lastStatusCode: null,
      lastError: expect.stringMatching(/Refused: .*localhost resolves to .*loopback/),
    });
    expect(receiver.received).toEqual([]);
    // Counted once the attempt's outcome is stored: the metric may follow the delivery's status by a moment.
    await eventually(async () => {
      const text = (await request(svc.url).get('/metrics').expect(200)).text;
      return /tms_webhook_deliveries_total\{result="refused"\} 1/.test(text) ? true : undefined;
    });
  });
});
