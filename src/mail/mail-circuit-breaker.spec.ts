import { BrokenCircuitError, CircuitState } from 'cockatiel';
import { mailCircuitBreaker, TrialCircuitBreaker } from './mail-circuit-breaker.js';

describe(TrialCircuitBreaker.name, () => {
  let clock: number;
  let breaker: TrialCircuitBreaker;
  let transitions: CircuitState[];
  const ok = () => breaker.execute(async () => 'sent');
  const fail = () => breaker.execute(async () => Promise.reject(new Error('451 try later')));
  const outcome = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e) => (e instanceof BrokenCircuitError ? 'rejected' : 'failed'),
    );

  beforeEach(() => {
    clock = 1_000_000;
    breaker = mailCircuitBreaker(() => clock);
    transitions = [];
    breaker.onStateChange((s) => transitions.push(s));
  });

  it('stays closed below half failures in the window of 10 calls', async () => {
    for (let i = 0; i < 6; i++) {await outcome(ok());}
    for (let i = 0; i < 4; i++) {await outcome(fail());}
    expect(breaker.state).toBe(CircuitState.Closed);
  });

  it('does not decide before 10 calls were seen', async () => {
    for (let i = 0; i < 9; i++) {await outcome(fail());}
    expect(breaker.state).toBe(CircuitState.Closed);
    await outcome(fail());
    expect(breaker.state).toBe(CircuitState.Open);
  });

  it('opens at exactly 50% failures over the rolling window, and refuses calls at once while open', async () => {
    for (let i = 0; i < 5; i++) {await outcome(ok());}
    for (let i = 0; i < 5; i++) {await outcome(fail());}
    expect(breaker.state).toBe(CircuitState.Open);
    let called = false;
    await expect(
      breaker.execute(async () => {
        called = true;
      }),
    ).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(called).toBe(false);
  });

  it('the window rolls: old failures drop out', async () => {
    for (let i = 0; i < 4; i++) {await outcome(fail());}
    for (let i = 0; i < 20; i++) {await outcome(ok());}
    for (let i = 0; i < 4; i++) {await outcome(fail());}
    expect(breaker.state).toBe(CircuitState.Closed);
  });

  async function openIt() {
    for (let i = 0; i < 10; i++) {await outcome(fail());}
    expect(breaker.state).toBe(CircuitState.Open);
  }

  it('stays open for 60 s, then lets exactly 3 trial calls through; three successes close it', async () => {
    await openIt();
    clock += 59_999;
    expect(await outcome(ok())).toBe('rejected');
    clock += 1;
    const pending = [ok(), ok(), ok()];
    expect(breaker.state).toBe(CircuitState.HalfOpen);
    expect(await outcome(ok())).toBe('rejected'); // a fourth call while the trials are out
    expect(await Promise.all(pending.map(outcome))).toEqual(['ok', 'ok', 'ok']);
    expect(breaker.state).toBe(CircuitState.Closed);
    expect(transitions).toEqual([CircuitState.Open, CircuitState.HalfOpen, CircuitState.Closed]);
    // Closed again with a fresh window: a few failures do not reopen it.
    for (let i = 0; i < 4; i++) {await outcome(fail());}
    expect(breaker.state).toBe(CircuitState.Closed);
  });

  it('two successes and one failure among the trials reopen it for another 60 s', async () => {
    await openIt();
    clock += 60_000;
    expect(await outcome(ok())).toBe('ok');
    expect(await outcome(ok())).toBe('ok');
    expect(breaker.state).toBe(CircuitState.HalfOpen);
    expect(await outcome(fail())).toBe('failed');
    expect(breaker.state).toBe(CircuitState.Open);
    clock += 59_000;
    expect(await outcome(ok())).toBe('rejected');
    clock += 1_000;
    expect(await outcome(ok())).toBe('ok');
    expect(breaker.state).toBe(CircuitState.HalfOpen);
  });

  it('a first failing trial reopens it at once; the other trials in flight no longer decide', async () => {
    await openIt();
    clock += 60_000;
    let release!: () => void;
    const slow = breaker.execute(() => new Promise<void>((r) => (release = r)));
    expect(await outcome(fail())).toBe('failed');
    expect(breaker.state).toBe(CircuitState.Open);
    release();
    await slow;
    expect(breaker.state).toBe(CircuitState.Open);
    expect(breaker.retryAfterMs).toBe(60_000);
  });
});
