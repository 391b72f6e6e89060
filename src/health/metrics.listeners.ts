import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { AUDIT_EVENT } from '../audit/audit.events.js';
import type { AuditRecord } from '../audit/audit.events.js';
import { RESULTS_EVENT } from '../results/results.events.js';
import type { ResultsEvent } from '../results/results.events.js';
import { Metrics } from './metrics.js';

/** Counts what the application announces anyway (audit records, stored results) into the metrics. */
@Injectable()
export class MetricsListeners {
  constructor(private readonly metrics: Metrics) {}

  @OnEvent(AUDIT_EVENT)
  onAudit(record: AuditRecord): void {
    if (record.type === 'LOGIN_FAILURE') {
      const reason = (record.details as { reason?: unknown } | undefined)?.reason;
      // The reason's kind only ("directory: unavailable" is "directory"): labels stay few.
      this.metrics.loginFailures.inc({ reason: typeof reason === 'string' ? reason.split(':')[0] : 'other' });
    }
  }

  @OnEvent(RESULTS_EVENT)
  onResults(event: ResultsEvent): void {
    if (event.event === 'results.added') {
      const added = (event.data as { added?: unknown }).added;
      if (typeof added === 'number' && added > 0) {
        this.metrics.resultsStored.inc(added);
      }
    }
  }
}
