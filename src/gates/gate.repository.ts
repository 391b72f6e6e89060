import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { effectiveSettings, type ProjectSettings } from '../common/project-settings.js';
import { withoutStatementTimeout } from '../database/statement-timeout.js';
import type { RunStatus } from '../results/entities.js';
import type { GateCondition, GateTally, GateVerdict } from './gate-conditions.js';
import { tallySql } from './gate-counting.js';

/** The run as the gate reads it, with its project's effective settings and the verdict stored before. */
export interface GateRun {
  id: string;
  projectId: string;
  status: RunStatus;
  settings: ProjectSettings;
  gateStatus: GateVerdict['status'] | null;
}

/** A run's stored verdict (runs.gate_*): null status while in progress or not evaluated yet. */
export interface StoredGate {
  runId: string;
  projectId: string;
  runStatus: RunStatus;
  status: GateVerdict['status'] | null;
  evaluatedAt: Date | null;
  conditions: GateCondition[];
  ignored: { quarantined: number; knownIssues: number };
}

@Injectable()
export class GateRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * `work` in a transaction that holds the run's gate lock: two evaluations of one run (its finish and a triage
   * on another replica) take turns, so the one stored last read the latest state. An advisory lock, not the run's
   * row: nothing that writes the run waits for the gate. No statement timeout: a run of a million results is
   * evaluated too.
   */
  locked<T>(runId: string, work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await withoutStatementTimeout(tx);
      await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('gate:' || $1::text, 7))`, [runId]);
      return work(tx);
    });
  }

  async run(tx: EntityManager, runId: string): Promise<GateRun | null> {
    const rows: {
      id: string;
      project_id: string;
      status: RunStatus;
      settings: unknown;
      gate_status: GateVerdict['status'] | null;
    }[] = await tx.query(
      `SELECT r.id, r.project_id, r.status, r.gate_status, p.settings
         FROM runs r JOIN projects p ON p.id = r.project_id WHERE r.id = $1`,
      [runId],
    );
    const [r] = rows;
    return r
      ? {
          id: String(r.id),
          projectId: String(r.project_id),
          status: r.status,
          settings: effectiveSettings(r.settings),
          gateStatus: r.gate_status,
        }
      : null;
  }

  /** The run's outcomes counted as the gate counts them (gate-counting.ts); undefined for a run deleted meanwhile. */
  async tally(
    tx: EntityManager,
    runId: string,
    options: { ignoreQuarantined: boolean; ignoreKnownIssues: boolean },
  ): Promise<GateTally | undefined> {
    const [t]: {
      ran: number;
      passed: number;
      failed: number;
      broken: number;
      skipped: number;
      new_failures: number;
      ignored_quarantined: number;
      ignored_known_issues: number;
    }[] = await tx.query(tallySql(), [runId, options.ignoreQuarantined, options.ignoreKnownIssues]);
    if (!t) {
      return undefined;
    }
    return {
      ran: t.ran,
      passed: t.passed,
      failed: t.failed,
      broken: t.broken,
      skipped: t.skipped,
      newFailures: t.new_failures,
      ignored: { quarantined: t.ignored_quarantined, knownIssues: t.ignored_known_issues },
    };
  }

  async store(
    tx: EntityManager,
    runId: string,
    verdict: GateVerdict,
    ignored: GateTally['ignored'],
  ): Promise<StoredGate> {
    const [rows]: [GateRow[], number] = await tx.query(
      `UPDATE runs SET gate_status = $2, gate_evaluated_at = now(), gate_conditions = $3::jsonb,
              gate_ignored_quarantined = $4, gate_ignored_known_issues = $5
        WHERE id = $1 RETURNING ${GATE_COLUMNS}`,
      [runId, verdict.status, JSON.stringify(verdict.conditions), ignored.quarantined, ignored.knownIssues],
    );
    return toStoredGate(rows[0]);
  }

  async read(runId: string): Promise<StoredGate | null> {
    const rows: GateRow[] = await this.db.query(`SELECT ${GATE_COLUMNS} FROM runs WHERE id = $1`, [runId]);
    return rows[0] ? toStoredGate(rows[0]) : null;
  }

  /**
   * The latest finished run of each of the project's streams (the run a gate's re-evaluation is for), each by
   * ix_runs_project_stream_started; with `testIds`, only those in which one of these tests ran (by
   * uq_results_test_run_outcome).
   */
  async latestOfStreams(projectId: string, testIds?: string[]): Promise<string[]> {
    const rows: { id: string }[] = await this.db.query(
      `SELECT l.id FROM (SELECT DISTINCT stream FROM runs WHERE project_id = $1) s
         CROSS JOIN LATERAL (
           SELECT id FROM runs WHERE project_id = $1 AND stream = s.stream AND status = 'FINISHED'
            ORDER BY started_at DESC, id DESC LIMIT 1) l
        WHERE $2::bigint[] IS NULL
           OR EXISTS (SELECT 1 FROM results WHERE test_id = ANY($2::bigint[]) AND run_id = l.id AND outcome)
        ORDER BY l.id`,
      [projectId, testIds ?? null],
    );
    return rows.map((r) => String(r.id));
  }
}

const GATE_COLUMNS = `id, project_id, status, gate_status, gate_evaluated_at, gate_conditions, gate_ignored_quarantined,
  gate_ignored_known_issues`;

interface GateRow {
  id: string;
  project_id: string;
  status: RunStatus;
  gate_status: GateVerdict['status'] | null;
  gate_evaluated_at: Date | null;
  gate_conditions: GateCondition[] | null;
  gate_ignored_quarantined: number | null;
  gate_ignored_known_issues: number | null;
}

function toStoredGate(r: GateRow): StoredGate {
  return {
    runId: String(r.id),
    projectId: String(r.project_id),
    runStatus: r.status,
    status: r.gate_status,
    evaluatedAt: r.gate_evaluated_at,
    conditions: r.gate_conditions ?? [],
    ignored: { quarantined: r.gate_ignored_quarantined ?? 0, knownIssues: r.gate_ignored_known_issues ?? 0 },
  };
}
