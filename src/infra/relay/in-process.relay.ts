import { LiveEvent, LiveRelay, RelayListener } from './live-relay.js';

/** The embedded relay: one process, so what is published is handed straight back (after the current tick). */
export class InProcessRelay extends LiveRelay {
  readonly kind = 'in-process';
  private listener?: RelayListener;

  publish(event: LiveEvent): void {
    setImmediate(() => this.listener?.event(event));
  }

  listen(listener: RelayListener): void {
    this.listener = listener;
  }

  isReady(): boolean {
    return true;
  }

  close(): Promise<void> {
    this.listener = undefined;
    return Promise.resolve();
  }
}
