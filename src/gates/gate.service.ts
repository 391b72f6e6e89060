import { Injectable, Logger } from '@nestjs/common';
import { EventEmitter2, OnEvent } from '@nestjs/event-emitter';
import { AppError } from '../common/app-error.js';
import {
  RESULTS_EVENT,
  RUN_FINISHED_EVENT,
  type ResultsEvent,
  type RunFinishedEvent,
} from '../results/results.events.js';
import { NotificationOutbox } from '../notifications/notification-outbox.js';
import { STABILITY_EVENT, type StabilityEvent } from '../stability/stability.events.js';
import type { GateDto } from './dto/gate.dto.js';
import { evaluateGate } from './gate-conditions.js';
import { GATE_REEVALUATE, type GateReevaluate } from './gate.events.js';
import { GateRepository, type StoredGate } from './gate.repository.js';

/**
 * The quality gate (API.md, "Quality gate"): evaluated when a run's outcomes become final (every surface announces
 * RUN_FINISHED_EVENT after its commit), and again for the latest finished run of each stream when what the gate
 * leaves out changes (a quarantine, a signature's triage or issue: reevaluateLatest). The verdict is stored on the
 * run, so every replica answers the same, and announced live as `run.gate`.
 */
@Injectable()
export class GateService {
  private readonly logger = new Logger('Gate');

  constructor(
    private readonly gates: GateRepository,
    private readonly events: EventEmitter2,
    private readonly notifications: NotificationOutbox,
  ) {}

  /** GET /api/runs/{id}/gate. A finished run not evaluated yet (its replica died first) is evaluated now. */
  async gate(runId: string): Promise<GateDto> {
    const stored = await this.gates.read(runId);
    if (!stored) {
      throw AppError.notFound(`Run ${runId} not found`);
    }
    if (stored.runStatus === 'FINISHED' && stored.status === null) {
      return toGateDto((await this.evaluate(runId)) ?? stored);
    }
    return toGateDto(stored);
  }

  /** A run's outcomes became final: never throws, so that no surface fails for its gate (GET evaluates it later). */
  @OnEvent(RUN_FINISHED_EVENT)
  async onRunFinished(event: RunFinishedEvent): Promise<void> {
    try {
      await this.evaluate(event.runId);
    } catch (error) {
      this.logger.error(`The gate of run ${event.runId} was not evaluated: ${(error as Error).message}`);
    }
  }

  /**
   * A test quarantined or released (by a person, by its results, or its `until` passed), announced after its commit:
   * the latest runs it ran in are evaluated again.
   */
  @OnEvent(STABILITY_EVENT)
  async onStability(event: StabilityEvent): Promise<void> {
    if (event.event === 'test.flaky') {
      return;
    }
    await this.onReevaluate({ projectId: event.projectId, testIds: [event.testId] });
  }

  /** Another feature changed what the gate leaves out, and announced it (see GATE_REEVALUATE). */
  @OnEvent(GATE_REEVALUATE)
  async onReevaluate(event: GateReevaluate): Promise<void> {
    try {
      await this.reevaluateLatest(event.projectId, event);
    } catch (error) {
      this.logger.error(
        `The gates of project ${event.projectId} were not evaluated again: ${(error as Error).message}`,
      );
    }
  }

  /**
   * Evaluates again the gate of the latest finished run of each of the project's streams (API.md: "again when a
   * signature's triage or issue, or a quarantine, changes while the run is the latest of its stream"); with
   * `testIds`, only of those latest runs in which one of these tests ran. Call it after the change has committed,
   * and await it for the verdict to be stored when the call returns. Answers the runs evaluated.
   */
  async reevaluateLatest(projectId: string, scope: { testIds?: string[] } = {}): Promise<string[]> {
    if (scope.testIds && !scope.testIds.length) {
      return [];
    }
    const runs = await this.gates.latestOfStreams(projectId, scope.testIds);
    for (const runId of runs) {
      await this.evaluate(runId);
    }
    return runs;
  }

  /**
   * Evaluates the run's gate over its outcomes now, stores and announces it; a run in progress is left PENDING
   * (undefined), as is one deleted meanwhile.
   *
   * A verdict that turns the run FAILED owes `run.failed` (API.md, "Notifications"), with the run and its gate, in
   * the transaction that stores it, and is announced once that committed (awaited, so that it is in the delivery
   * outbox when the finish answers; a crash in between leaves it to the sweep). Once per run: its key is the run's,
   * so an evaluation again that fails too owes nothing, one that fails again after passing adds no delivery or
   * mail, and a run that failed only on its evaluation again (passed at its finish) is announced then.
   */
  async evaluate(runId: string): Promise<StoredGate | undefined> {
    let owed = false;
    const stored = await this.gates.locked(runId, async (tx) => {
      const run = await this.gates.run(tx, runId);
      if (!run || run.status !== 'FINISHED') {
        return undefined;
      }
      const settings = run.settings.gate;
      const tally = settings.enabled
        ? await this.gates.tally(tx, runId, {
            ignoreQuarantined: settings.ignoreQuarantined,
            ignoreKnownIssues: settings.ignoreKnownIssues,
          })
        : undefined;
      if (settings.enabled && !tally) {
        return undefined; // deleted since it was read (the tally starts from its row)
      }
      const verdict = tally ? evaluateGate(settings, tally) : { status: 'OFF' as const, conditions: [] };
      const stored = await this.gates.store(
        tx,
        runId,
        verdict,
        tally?.ignored ?? { quarantined: 0, knownIssues: 0 },
      );
      if (stored.status === 'FAILED' && run.gateStatus !== 'FAILED') {
        const gate = toGateDto(stored);
        await this.notifications.owe(
          {
            type: 'run.failed',
            projectId: stored.projectId,
            runId,
            data: { gate: { status: gate.status, conditions: gate.conditions } },
          },
          tx,
        );
        owed = true;
      }
      return stored;
    });
    if (stored) {
      this.events.emit(RESULTS_EVENT, {
        projectId: stored.projectId,
        event: 'run.gate',
        runId,
        data: { gate: toGateDto(stored) },
      } satisfies ResultsEvent);
      if (owed) {
        // With what the run's finish owes, when this is its first evaluation: its gate is in it now.
        await this.notifications.announce({ runId });
      }
    }
    return stored;
  }
}

export function toGateDto(g: StoredGate): GateDto {
  const pending = g.runStatus !== 'FINISHED' || g.status === null;
  return {
    status: pending ? 'PENDING' : g.status!,
    evaluatedAt: pending ? null : (g.evaluatedAt?.toISOString() ?? null),
    conditions: pending ? [] : g.conditions,
    ignored: pending ? { quarantined: 0, knownIssues: 0 } : g.ignored,
  };
}
