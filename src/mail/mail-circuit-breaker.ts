import {
  BrokenCircuitError,
  CircuitState,
  CountBreaker,
  EventEmitter,
  IBreaker,
  IDefaultPolicyContext,
  IFailureEvent,
  IPolicy,
  ISuccessEvent,
} from 'cockatiel';

export interface TrialBreakerOptions {
  /** Decides, while closed, when to open: here cockatiel's rolling count of the last calls. */
  breaker: IBreaker;
  /** How long the circuit stays open before trial calls are let through. */
  openMs: number;
  /** How many trial calls decide, all succeeding to close, any failing to reopen. */
  trials: number;
  now?: () => number;
}

/**
 * A circuit breaker on cockatiel's interfaces (IPolicy, IBreaker, CircuitState, BrokenCircuitError)
 * whose half-open state lets several trial calls through instead of cockatiel's single one: after
 * `openMs` the next `trials` calls go to the relay; when all of them succeed the circuit closes, as soon
 * as one fails it opens for another `openMs`. Further calls while the trials are out are refused at once.
 */
export class TrialCircuitBreaker implements IPolicy {
  declare readonly _altReturn: never;
  private readonly successEmitter = new EventEmitter<ISuccessEvent>();
  private readonly failureEmitter = new EventEmitter<IFailureEvent>();
  private readonly stateEmitter = new EventEmitter<CircuitState>();
  readonly onSuccess = this.successEmitter.addListener;
  readonly onFailure = this.failureEmitter.addListener;
  /** Fired on every transition: Closed → Open → HalfOpen → Closed or Open. */
  readonly onStateChange = this.stateEmitter.addListener;

  private current = CircuitState.Closed;
  private openedAt = 0;
  /** Trial calls handed out in this half-open period, and how many of them succeeded. */
  private trialsStarted = 0;
  private trialsSucceeded = 0;
  /** Bumped on every transition, so a call that started in an earlier period cannot decide this one. */
  private period = 0;
  private readonly now: () => number;

  constructor(private readonly options: TrialBreakerOptions) {
    this.now = options.now ?? Date.now;
  }

  get state(): CircuitState {
    return this.current;
  }

  /** Milliseconds until trial calls are allowed; 0 unless open. */
  get retryAfterMs(): number {
    return this.current === CircuitState.Open ? Math.max(0, this.openedAt + this.options.openMs - this.now()) : 0;
  }

  async execute<T>(fn: (context: IDefaultPolicyContext) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> {
    const admitted = this.admit();
    const started = this.now();
    try {
      const value = await fn({ signal: signal ?? new AbortController().signal });
      this.succeeded(admitted);
      this.successEmitter.emit({ duration: this.now() - started });
      return value;
    } catch (error) {
      this.failed(admitted);
      this.failureEmitter.emit({ duration: this.now() - started, handled: true, reason: { error: error as Error } });
      throw error;
    }
  }

  /** Lets the call through or throws BrokenCircuitError; returns the state and period it was admitted in. */
  private admit(): { state: CircuitState; period: number } {
    if (this.current === CircuitState.Open && this.retryAfterMs === 0) {
      this.transition(CircuitState.HalfOpen);
    }
    if (this.current === CircuitState.Open) {
      throw new BrokenCircuitError('The mail circuit is open: the relay is not contacted until it half-opens');
    }
    if (this.current === CircuitState.HalfOpen) {
      if (this.trialsStarted >= this.options.trials) {
        throw new BrokenCircuitError('The mail circuit is half-open and its trial calls are under way');
      }
      this.trialsStarted++;
    }
    return { state: this.current, period: this.period };
  }

  private succeeded(admitted: { state: CircuitState; period: number }): void {
    if (admitted.period !== this.period) {
      return;
    }
    if (this.current === CircuitState.Closed) {
      this.options.breaker.success(CircuitState.Closed);
    } else if (this.current === CircuitState.HalfOpen && ++this.trialsSucceeded >= this.options.trials) {
      this.options.breaker.success(CircuitState.HalfOpen); // resets the rolling window
      this.transition(CircuitState.Closed);
    }
  }

  private failed(admitted: { state: CircuitState; period: number }): void {
    if (admitted.period !== this.period) {
      return;
    }
    if (this.current === CircuitState.Closed) {
      if (this.options.breaker.failure(CircuitState.Closed)) {
        this.open();
      }
    } else if (this.current === CircuitState.HalfOpen) {
      this.options.breaker.failure(CircuitState.HalfOpen);
      this.open();
    }
  }

  private open(): void {
    this.openedAt = this.now();
    this.transition(CircuitState.Open);
  }

  private transition(next: CircuitState): void {
    this.current = next;
    this.period++;
    this.trialsStarted = 0;
    this.trialsSucceeded = 0;
    this.stateEmitter.emit(next);
  }
}

/** The spec's mail breaker: opens at ≥ 50% failures over the last 10 calls, 60 s open, then 3 trials. */
export function mailCircuitBreaker(now?: () => number): TrialCircuitBreaker {
  return new TrialCircuitBreaker({
    // CountBreaker opens when failures > threshold × calls; just under one half makes 5 of 10 open it.
    breaker: new CountBreaker({ threshold: 0.49, size: 10, minimumNumberOfCalls: 10 }),
    openMs: 60_000,
    trials: 3,
    now,
  });
}
