import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The process's Prometheus registry: default Node metrics plus HTTP request counts and durations. */
@Injectable()
export class Metrics {
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'tms_' });
  }

  /** Reports a count kept elsewhere (e.g. the queue's dead letters) whenever /metrics is read. */
  countFrom(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** Express middleware: times every request, labelled by its route pattern (never the raw path). */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const end = this.requests.startTimer();
      res.once('finish', () => {
        const route = (req.route as { path?: string } | undefined)?.path;
        end({ method: req.method, route: route ? `${req.baseUrl}${route}` : 'unmatched', status: res.statusCode });
      });
      next();
    };
  }
}
