import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** Durations (ms) over runs, oldest first, with uPlot: one point a run. */
export function DurationChart({ labels, durations }: { labels: string[]; durations: (number | null)[] }) {
  const box = useRef<HTMLDivElement>(null);
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
        scales: { x: { time: false } },
        axes: [
          { label: 'run', values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? String(t) : '')) },
          { label: 'ms' },
        ],
        series: [
          { label: 'run' },
          { label: 'duration (ms)', stroke: '#1f5fbf', width: 2, points: { show: true, size: 5 } },
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
  }, [labels, durations]);
  return (
    <div ref={box} className="chart" role="img" aria-label={`Duration over the last ${labels.length} runs`} />
  );
}
