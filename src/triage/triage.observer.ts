import type { EntityManager } from 'typeorm';
import type { DeletedResults, ResultsObserver, RunRef, StoredResult } from '../results/results-observers.js';
import { failureKey } from './failure-signature.js';
import { recountSignatures } from './signatures-recount.js';
import { type Failure, PendingFailures, SignatureIdCache, suggestFor } from './signatures.writer.js';

/**
 * Failure signatures in the write path (DESIGN.md, "Derived state"). Each failing result's key is computed while its
 * input is at hand (resultsStored); the failures of a write are gathered per transaction and stored once the write has
 * settled (outcomesSettled: after each V1/V2 batch, at the end of an import), in one key-ordered upsert. So an import
 * locks its signatures only for its last moments, not from its first batch on: V1 writers of the same failures and
 * a second import wait for its commit, not for its whole upload, and two imports cannot lock them in crossed orders.
 */
export class TriageObserver implements ResultsObserver {
  /** The failures of a write not stored yet, by its transaction (let go with it, should it fail first). */
  private readonly pending = new WeakMap<EntityManager, PendingFailures>();
  /** Ids of signatures written before (a few MB at most): a rerun's known failures are stored without a look-up. */
  private readonly signatureIds = new SignatureIdCache(20_000);

  resultsStored(
    _run: RunRef,
    batch: readonly StoredResult[],
  ): ((tx: EntityManager) => Promise<void>) | undefined {
    let failures: Failure[] | undefined;
    for (const { id, testId, input } of batch) {
      if (input.status === 'FAILED' || input.status === 'BROKEN') {
        (failures ??= []).push({
          resultId: id,
          testId,
          key: failureKey(input.message, input.trace),
          message: input.message ?? null,
        });
      }
    }
    if (!failures) {
      return undefined;
    }
    const gathered = failures;
    return (tx) => {
      let pending = this.pending.get(tx);
      if (!pending) {
        pending = new PendingFailures();
        this.pending.set(tx, pending);
      }
      pending.add(gathered);
      return Promise.resolve();
    };
  }

  /**
   * Results deleted by retention or a run's deletion (src/retention/): what their failing results added to their
   * signatures is taken away in the purge batch's transaction, and signatures left without occurrences go
   * (signatures-recount.ts).
   */
  async resultsDeleted(tx: EntityManager, deleted: DeletedResults): Promise<void> {
    await recountSignatures(tx, deleted.failures);
  }

  async outcomesSettled(tx: EntityManager, run: RunRef): Promise<void> {
    const pending = this.pending.get(tx);
    if (!pending) {
      return;
    }
    this.pending.delete(tx);
    const created = await pending.store(tx, run.projectId, run.id, this.signatureIds);
    await suggestFor(tx, run.projectId, created);
  }
}
