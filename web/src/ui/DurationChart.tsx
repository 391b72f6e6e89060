import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { runAxis, themedAxis, useChartColors } from './chart-theme';

/**
 * Durations (ms) over runs, oldest first, with uPlot: one point a run. Drawn in the colours of the scheme in use,
 * and again when it changes.
 */
export function DurationChart({ labels, durations }: { labels: string[]; durations: (number | null)[] }) {
  const box = useRef<HTMLDivElement>(null);
  const colors = useChartColors();
  useEffect(() => {
    const el = box.current;
    if (!el) {
      return;
    }
    const xs = labels.map((_, i) => i + 1);
    const chart = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 200,
        // Half a run of room either side, so that the first and last points are not cut at an edge.
        scales: { x: { time: false, range: [0.5, labels.length + 0.5] } },
        axes: [runAxis(colors), themedAxis(colors, { label: 'ms' })],
        series: [
          { label: 'run' },
          { label: 'duration (ms)', stroke: colors.accent, width: 2, points: { show: true, size: 5 } },
        ],
        legend: { show: false },
      },
      [xs, durations],
      el,
    );
    const resize = () => chart.setSize({ width: Math.max(280, el.clientWidth), height: 200 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.destroy();
    };
  }, [labels, durations, colors]);
  return (
    <div ref={box} className="chart" role="img" aria-label={`Duration over the last ${labels.length} runs`} />
  );
}
