import { PeriodicSweep } from './periodic-sweep.js';

describe('PeriodicSweep', () => {
  it('runs one sweep at a time: a run during a sweep joins it', async () => {
    let calls = 0;
    let finish!: (n: number) => void;
    const periodic = new PeriodicSweep(
      () => {
        calls++;
        return new Promise<number>((resolve) => (finish = resolve));
      },
      () => undefined,
    );
    const first = periodic.run();
    const second = periodic.run();
    expect(calls).toBe(1);
    finish(3);
    expect(await Promise.all([first, second])).toEqual([3, 3]);
    const third = periodic.run();
    expect(calls).toBe(2);
    finish(4);
    expect(await third).toBe(4);
  });

  it('tells a sweep in progress to stop, and waits for it', async () => {
    const seen: boolean[] = [];
    let release!: () => void;
    const periodic: PeriodicSweep<void> = new PeriodicSweep(
      async () => {
        await new Promise<void>((resolve) => (release = resolve));
        seen.push(periodic.stopped);
      },
      () => undefined,
    );
    periodic.start(60_000, true);
    const stopping = periodic.stop();
    release();
    await stopping;
    expect(seen).toEqual([true]);
  });
});
