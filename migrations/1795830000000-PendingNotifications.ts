import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The notifications a change owes, written in the change's own transaction (issue #39: "a crash between commit and
 * send loses nothing"): one compact row an event (a run's finish, its gate FAILED, a test turned flaky or
 * quarantined), no webhook or member looked at. Right after the commit the replica that made the change turns the
 * row into the event's deliveries and mail (webhook_deliveries, mail_outbox) and deletes it, in one transaction;
 * a row its replica did not get to (it died, or the database failed it) is taken by the sweep of any replica once
 * SVC_NOTIFY_GRACE has passed (FOR UPDATE SKIP LOCKED). Unique by the event's key within the project, as the
 * deliveries are: an event owed twice is announced once.
 *
 * No foreign keys: the row is written on the path that finishes runs and stores results, and a run, test or project
 * deleted meanwhile leaves a row its announcement finds nothing for and drops.
 */
export class PendingNotifications1795830000000 implements MigrationInterface {
  name = 'PendingNotifications1795830000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pending_notifications (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        project_id bigint NOT NULL,
        type varchar(40) NOT NULL,
        event_key varchar(200) NOT NULL,
        run_id bigint,
        test_id bigint,
        data jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT uq_pending_notifications_key UNIQUE (project_id, event_key)
      )`);
    await q.query(
      `CREATE INDEX ix_pending_notifications_run ON pending_notifications (run_id) WHERE run_id IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX ix_pending_notifications_test ON pending_notifications (test_id) WHERE test_id IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE pending_notifications`);
  }
}
