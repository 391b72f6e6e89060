/** A domain event as the live-update relay carries it between replicas, and the gateway sends it. */
export interface LiveEvent {
  projectId: string;
  event:
    | 'run.created'
    | 'run.finished'
    | 'results.added'
    | 'import.completed'
    | 'test.flaky'
    | 'test.quarantined'
    | 'test.released'
    | 'run.gate';
  /** Run events carry `runId`; test events `testId` and, when a run's results made it so, `runId`. */
  data: Record<string, unknown>;
  /** When it happened (ISO 8601). */
  at: string;
}

export interface RelayListener {
  /** An event published by any replica (this one included), once. */
  event(event: LiveEvent): void;
  /** The relay was down and is back: events published meanwhile are lost, clients should refetch. */
  resync(): void;
}

/**
 * Fan-out of live events between the replicas of a deployment. Each replica publishes its own events once and
 * delivers to its sockets only what the relay hands back, so every subscriber gets each event exactly once.
 */
export abstract class LiveRelay {
  /** For the readiness check: only a relay that can be down is checked. */
  abstract readonly kind: 'stomp' | 'in-process';

  /** Publishes `event` to every replica's listener. Never throws: while the relay is down, the event is lost. */
  abstract publish(event: LiveEvent): void;

  /** Sets the one listener of this replica. */
  abstract listen(listener: RelayListener): void;

  /** True while events can flow. */
  abstract isReady(): boolean;

  abstract close(): Promise<void>;
}
