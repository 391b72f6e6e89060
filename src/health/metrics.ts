import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import type { Request } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The process's Prometheus registry: default Node metrics plus HTTP request counts and durations. */
@Injectable()
export class Metrics implements OnModuleDestroy {
  readonly registry = new Registry();
  private readonly requests = new Histogram({
    name: 'tms_http_request_duration_seconds',
    help: 'HTTP request duration by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  readonly rateLimitHits = new Counter({
    name: 'tms_rate_limit_hits_total',
    help: 'Requests refused by a rate limit',
    labelNames: ['endpoint'],
    registers: [this.registry],
  });

  readonly mailSent = new Counter({
    name: 'tms_mail_sent_total',
    help: 'Messages the mail relay accepted, by kind',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly mailFailed = new Counter({
    name: 'tms_mail_failed_total',
    help: 'Messages given up on (permanent relay error or too many attempts), by kind',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly mailDropped = new Counter({
    name: 'tms_mail_dropped_total',
    help: 'Messages dropped by the per-recipient limit',
    registers: [this.registry],
  });
  readonly mailBreakerState = new Gauge({
    name: 'tms_mail_circuit_state',
    help: 'Mail circuit breaker: 0 closed, 1 open, 2 half-open',
    registers: [this.registry],
  });

  readonly webhookDeliveries = new Counter({
    name: 'tms_webhook_deliveries_total',
    help: 'Webhook delivery attempts by result: delivered, retrying (failed, will be retried), failed (given up), refused (a private address at send time)',
    labelNames: ['result'],
    registers: [this.registry],
  });

  readonly loginFailures = new Counter({
    name: 'tms_login_failures_total',
    help: 'Failed sign-ins (password, second factor or directory), by reason',
    labelNames: ['reason'],
    registers: [this.registry],
  });
  readonly retentionDeleted = new Counter({
    name: 'tms_retention_deleted_total',
    help: 'Rows removed by retention and by deletes of runs and projects, by kind (runs, results, tests)',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly resultsStored = new Counter({
    name: 'tms_results_stored_total',
    help: 'Test results stored, through V1, V2 and import',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'tms_' });
    subscribe(FINISH_CHANNEL, this.onFinish);
  }

  /**
   * Reports a value kept elsewhere, read at once or asynchronously (the queue's dead letters, its depth), whenever
   * /metrics is read.
   */
  gaugeFrom(name: string, help: string, read: () => number | Promise<number>): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      async collect() {
        this.set(await read());
      },
    });
  }

  /**
   * Notes a request's start (the app's first middleware calls it): requests are timed and labelled by their
   * route pattern (never the raw path) when Node's `http.server.response.finish` diagnostics channel reports
   * their end. A per-request 'finish' listener and prom-client's timer (a closure, an hrtime array, a label
   * merge) cost ~10% of a small request.
   */
  start(req: Request): void {
    (req as unknown as Timed)[this.started] = performance.now();
  }

  onModuleDestroy(): void {
    unsubscribe(FINISH_CHANNEL, this.onFinish);
  }

  /** Marks the requests started on this instance (the channel is process-wide; tests run several apps). */
  private readonly started = Symbol('tms.request-started');
  /** One labels object per method, route and status, reused by every observation. */
  private readonly labelSets = new Map<string, { method: string; route: string; status: number }>();

  private readonly onFinish = (message: unknown): void => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const started = (request as unknown as Timed)[this.started];
    if (started === undefined) {
      return;
    }
    const req = request as Request;
    const path = (req.route as { path?: string } | undefined)?.path;
    const route = path ? `${req.baseUrl}${path}` : 'unmatched';
    const key = `${req.method} ${response.statusCode} ${route}`;
    let labels = this.labelSets.get(key);
    if (!labels) {
      labels = { method: req.method, route, status: response.statusCode };
      this.labelSets.set(key, labels);
    }
    this.requests.observe(labels, (performance.now() - started) / 1000);
  };
}

const FINISH_CHANNEL = 'http.server.response.finish';

type Timed = Record<symbol, number | undefined>;
