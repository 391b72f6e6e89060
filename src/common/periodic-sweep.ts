/**
 * A sweep run every `intervalMs` in this replica (its timer does not keep the process alive), one at a time: `run`
 * during a sweep joins it instead of starting another. A failed sweep is logged by `onError`; `stopped` tells a
 * sweep in progress to end early, and `stop` waits for it.
 */
export class PeriodicSweep<T> {
  private timer?: NodeJS.Timeout;
  private running?: Promise<T>;
  private halted = false;

  constructor(
    private readonly sweep: () => Promise<T>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Sweeps every `intervalMs`, and at once when `now`. */
  start(intervalMs: number, now = false): void {
    const tick = () => {
      this.run().catch(this.onError);
    };
    this.timer = setInterval(tick, intervalMs);
    this.timer.unref();
    if (now) {
      tick();
    }
  }

  run(): Promise<T> {
    this.running ??= this.sweep().finally(() => (this.running = undefined));
    return this.running;
  }

  get stopped(): boolean {
    return this.halted;
  }

  async stop(): Promise<void> {
    this.halted = true;
    clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }
}
