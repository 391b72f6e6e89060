import { Injectable } from '@nestjs/common';

/** A failing result's signature as results show it (API.md: `failure` on FAILED/BROKEN results). */
export interface ResultFailure {
  signatureId: number;
  isNew: boolean;
  triage: string;
  issue: { url: string; key?: string; title?: string } | null;
}

type Reader = (runId: string, resultIds: string[]) => Promise<Map<string, ResultFailure>>;

/**
 * Where the results service reads the signatures of failing results: the triage feature provides the reader when it
 * starts (as features register route parameters with ProjectLocator), so that results/ does not depend on triage/,
 * which observes the results writer.
 */
@Injectable()
export class ResultFailures {
  private reader: Reader | undefined;

  provide(reader: Reader): void {
    this.reader = reader;
  }

  /** The signatures of these results of the run, by result id (none for results that are no failure). */
  of(runId: string, resultIds: string[]): Promise<Map<string, ResultFailure>> {
    return this.reader && resultIds.length ? this.reader(runId, resultIds) : Promise.resolve(new Map());
  }
}
