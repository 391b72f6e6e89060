import { lazy, Suspense } from 'react';
import type { ComponentProps } from 'react';

/**
 * The charts, loaded when a page first shows one: uPlot is a fifth of the app's JavaScript, and the run page, the
 * one people open most and on the largest runs, has no chart.
 */
const PassRate = lazy(() => import('./PassRateChart').then((m) => ({ default: m.PassRateChart })));
const Duration = lazy(() => import('./DurationChart').then((m) => ({ default: m.DurationChart })));

export function PassRateChart(props: ComponentProps<typeof PassRate>) {
  return (
    <Suspense fallback={<div className="chart chart-pending" />}>
      <PassRate {...props} />
    </Suspense>
  );
}

export function DurationChart(props: ComponentProps<typeof Duration>) {
  return (
    <Suspense fallback={<div className="chart chart-pending" />}>
      <Duration {...props} />
    </Suspense>
  );
}
