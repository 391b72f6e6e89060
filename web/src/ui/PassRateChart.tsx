import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { TrendPoint } from '../api/client';
import { runAxis, themedAxis, useChartColors } from './chart-theme';
import { passRate } from './CountBar';

/**
 * Pass rate (%) over the project's latest runs, oldest first, with uPlot: one point a run. Drawn in the colours of
 * the scheme in use, and again when it changes.
 */
export function PassRateChart({ points }: { points: TrendPoint[] }) {
  const box = useRef<HTMLDivElement>(null);
  const colors = useChartColors();
  useEffect(() => {
    const el = box.current;
    if (!el) {
      return;
    }
    const xs = points.map((_, i) => i + 1);
    const rates = points.map((p) => (p.passRate === null ? null : Math.floor(p.passRate * 1000) / 10));
    const chart = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 180,
        // Room around the first and last runs and above 100%, so that no point is cut at an edge.
        scales: { x: { time: false, range: [0.5, points.length + 0.5] }, y: { range: [0, 104] } },
        axes: [
          runAxis(colors),
          themedAxis(colors, {
            label: 'pass rate %',
            splits: () => [0, 25, 50, 75, 100],
            values: (_u, ticks) => ticks.map((t) => `${t}%`),
          }),
        ],
        series: [
          { label: 'run' },
          {
            label: 'pass rate',
            stroke: colors.good,
            fill: colors.goodFill,
            width: 2,
            points: { show: true, size: 5 },
          },
        ],
        legend: { show: false },
      },
      [xs, rates],
      el,
    );
    const resize = () => chart.setSize({ width: Math.max(280, el.clientWidth), height: 180 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.destroy();
    };
  }, [points, colors]);
  const last = points.at(-1);
  const summary =
    last?.passRate == null ? '' : `; the latest, ${last.name}, ${passRate(last.counts)}`;
  return (
    <div
      ref={box}
      className="chart"
      role="img"
      aria-label={`Pass rate over the last ${points.length} runs${summary}`}
    />
  );
}
