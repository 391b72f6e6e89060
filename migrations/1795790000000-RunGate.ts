import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The quality gate's verdict on a run (API.md, "Quality gate"), stored on the run so that every replica reads the
 * same one and a list of runs shows it without evaluating: `gate_status` (PASSED, FAILED or OFF; null until the
 * finished run is evaluated, read as PENDING), when, each condition with its expected and actual value, and how
 * many outcomes the gate left out (quarantined tests, known issues). Existing runs keep null: the gate reads their
 * outcomes when first asked for (GET /api/runs/{id}/gate), not every run's at boot.
 */
export class RunGate1795790000000 implements MigrationInterface {
  name = 'RunGate1795790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE runs
         ADD COLUMN gate_status varchar(8) CHECK (gate_status IN ('PASSED', 'FAILED', 'OFF')),
         ADD COLUMN gate_evaluated_at timestamptz,
         ADD COLUMN gate_conditions jsonb,
         ADD COLUMN gate_ignored_quarantined integer,
         ADD COLUMN gate_ignored_known_issues integer`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE runs DROP COLUMN gate_status, DROP COLUMN gate_evaluated_at, DROP COLUMN gate_conditions,
         DROP COLUMN gate_ignored_quarantined, DROP COLUMN gate_ignored_known_issues`,
    );
  }
}
