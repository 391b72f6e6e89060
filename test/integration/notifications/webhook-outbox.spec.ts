import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../../src/database/data-source-options.js';
import { MAX_ATTEMPTS } from '../../../src/notifications/webhook-sender.service.js';
import { type ClaimedDelivery, WebhooksRepository } from '../../../src/notifications/webhooks.repository.js';
import { createTestDatabase, TestDatabase } from '../../support/database.js';

/**
 * The webhook delivery outbox (src/notifications/webhooks.repository.ts) on PostgreSQL: the retry schedule of
 * API.md (the retry base doubled after each failed attempt, eight attempts in all) and the claim an outcome is
 * recorded under (several replicas send from one outbox; none may record over another's claim).
 */
describe('webhook delivery outbox', () => {
  let database: TestDatabase;
  let db: DataSource;
  let repository: WebhooksRepository;
  let webhookId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = await new DataSource(dataSourceOptions(database.url, 4)).initialize();
    repository = new WebhooksRepository(db);
    const [{ id: projectId }] = await db.query(
      `INSERT INTO projects (key, name) VALUES ('HOOK', 'hooks') RETURNING id`,
    );
    const [{ id }] = await db.query(
      `INSERT INTO webhooks (project_id, url, events, secret_encrypted)
       VALUES ($1, 'https://203.0.113.10/hook', '{run.finished}', 'v1:x') RETURNING id`,
      [projectId],
    );
    webhookId = String(id);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  /** A new delivery, due now; its id. */
  async function queued(key: string): Promise<string> {
    const [{ id }] = await db.query(
      `INSERT INTO webhook_deliveries (webhook_id, event, event_key, message_id, payload)
       VALUES ($1, 'run.finished', $2, $3, '{"timestamp": "2026-01-01T00:00:00Z", "projectId": "1", "data": {}}')
       RETURNING id`,
      [webhookId, key, `msg_${key}`],
    );
    return String(id);
  }

  async function claim(id: string, leaseSeconds = 30): Promise<ClaimedDelivery> {
    const claimed = await repository.claimDue(10, leaseSeconds);
    const mine = claimed.find((d) => d.id === id);
    expect(mine).toBeDefined();
    return mine!;
  }

  const row = async (id: string) =>
    (
      await db.query(
        `SELECT status, attempts, last_status_code, last_error, locked_until,
                extract(epoch FROM next_attempt_at - now())::float8 AS due_in
           FROM webhook_deliveries WHERE id = $1`,
        [id],
      )
    )[0] as {
      status: string;
      attempts: number;
      last_status_code: number | null;
      last_error: string | null;
      locked_until: Date | null;
      due_in: number;
    };

  const policy = { maxAttempts: MAX_ATTEMPTS, retryBaseSeconds: 10, final: false, statusCode: 503 };

  it('retries 1, 2, 4 … 64 retry bases after each failed attempt and gives up at the eighth', async () => {
    const id = await queued('schedule');
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 8; attempt++) {
      const outcome = await repository.markAttemptFailed(await claim(id), { ...policy, error: 'HTTP 503' });
      const after = await row(id);
      expect(outcome).toMatchObject({ attempts: attempt, givenUp: attempt === 8 });
      expect(after).toMatchObject({ attempts: attempt, last_status_code: 503, last_error: 'HTTP 503' });
      expect(after.locked_until).toBeNull();
      if (attempt < 8) {
        expect(after.status).toBe('PENDING');
        waits.push(Math.round(after.due_in));
        // Due again at once, for the next claim.
        await db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, [id]);
      } else {
        expect(after.status).toBe('FAILED');
      }
    }
    expect(waits).toEqual([10, 20, 40, 80, 160, 320, 640]);
    // Given up: not claimed again.
    expect((await repository.claimDue(10, 30)).map((d) => d.id)).not.toContain(id);
  });

  it('records an outcome only under the claim that sent it', async () => {
    const id = await queued('claims');
    const first = await claim(id);
    // Not claimed twice while its lease lasts.
    expect((await repository.claimDue(10, 30)).map((d) => d.id)).not.toContain(id);
    // Its lease ends before its answer is recorded (a replica stalled), and another replica claims it.
    await db.query(`UPDATE webhook_deliveries SET locked_until = now() - interval '1 second' WHERE id = $1`, [
      id,
    ]);
    const second = await claim(id);
    expect(second.lease).not.toBe(first.lease);
    // The stalled replica's outcome is not recorded over the new claim, whichever it is.
    expect(await repository.markDelivered(first, 200)).toBe(false);
    expect(await repository.markAttemptFailed(first, { ...policy, error: 'HTTP 503' })).toBeUndefined();
    expect(await row(id)).toMatchObject({ status: 'PENDING', attempts: 0, last_status_code: null });
    // The claim that holds the row records its own.
    expect(await repository.markDelivered(second, 204)).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'DELIVERED', attempts: 1, last_status_code: 204 });
  });

  it('counts a webhook failing from its first failed attempt until a success, "in a row"', async () => {
    const since = async () =>
      (
        (await db.query(`SELECT failing_since FROM webhooks WHERE id = $1`, [webhookId]))[0] as {
          failing_since: Date | null;
        }
      ).failing_since;
    await db.query(`UPDATE webhooks SET failing_since = NULL WHERE id = $1`, [webhookId]);
    const first = await queued('row-1');
    const failed = await repository.markAttemptFailed(await claim(first), { ...policy, error: 'HTTP 503' });
    const started = await since();
    expect(started).toEqual(failed!.failingSince);
    // A second failure keeps the start of the streak.
    await db.query(`UPDATE webhook_deliveries SET next_attempt_at = now() WHERE id = $1`, [first]);
    const again = await repository.markAttemptFailed(await claim(first), { ...policy, error: 'HTTP 503' });
    expect(again!.failingSince).toEqual(started);
    // A success ends it: the next failure starts a new one.
    const second = await queued('row-2');
    expect(await repository.markDelivered(await claim(second), 200)).toBe(true);
    expect(await since()).toBeNull();
  });

  it('lets a redelivery take the row from a claim in flight', async () => {
    const id = await queued('redelivered');
    const inFlight = await claim(id);
    expect(await repository.redeliver(webhookId, id)).toBe(true);
    expect(await repository.markAttemptFailed(inFlight, { ...policy, error: 'HTTP 503' })).toBeUndefined();
    expect(await row(id)).toMatchObject({ status: 'PENDING', attempts: 0 });
    const again = await claim(id);
    expect(await repository.markDelivered(again, 200)).toBe(true);
  });
});
