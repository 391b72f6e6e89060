import type { HistoryItem } from '../../api/client';

/** Runs in which the status flipped (pass to fail or back) among those that ran: how flaky the test is. */
export function flips(items: HistoryItem[]): number {
  const ran = items.filter((i) => i.status !== 'SKIPPED');
  let n = 0;
  for (let i = 1; i < ran.length; i++) {
    if ((ran[i].status === 'PASSED') !== (ran[i - 1].status === 'PASSED')) {
      n++;
    }
  }
  return n;
}
