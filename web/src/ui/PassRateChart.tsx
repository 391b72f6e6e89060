import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { TrendPoint } from '../api/client';
import { runAxis, themedAxis, useChartColors } from './chart-theme';
import { formatDate } from './components';
import { passPercent, passRate } from './CountBar';
import { labelledSplits, passRateRange, runLabel } from './trend-scale';

/**
 * Pass rate (%) over the latest runs, oldest first, with uPlot: one point a run, labelled by its build number. The
 * y axis fits the rates shown (95-100% when that is where the runs sit). Hovering a point tells its run, when it
 * started and its rate; a click opens it (`onOpen`). Drawn in the colours of the scheme in use, and again when it
 * changes.
 */
export function PassRateChart({
  points,
  onOpen,
}: {
  points: TrendPoint[];
  /** Opens a run: a click on the chart opens the run under the cursor. */
  onOpen?: (runId: number) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  const colors = useChartColors();
  const open = useRef(onOpen);
  useEffect(() => {
    open.current = onOpen;
  }, [onOpen]);
  useEffect(() => {
    const el = box.current;
    if (!el) {
      return;
    }
    const xs = points.map((_, i) => i + 1);
    const rates = points.map((p) => passPercent(p.counts));
    const y = passRateRange(rates);
    const labelled = labelledSplits(y.splits);
    const labels = points.map((p, i) => runLabel(p.name, i + 1));
    const tip = document.createElement('div');
    tip.className = 'chart-tip';
    tip.hidden = true;
    const chart = new uPlot(
      {
        width: Math.max(280, el.clientWidth),
        height: 124,
        // Room around the first and last runs, so that no point is cut at an edge.
        scales: { x: { time: false, range: [0.5, points.length + 0.5] }, y: { range: [y.min, y.max] } },
        axes: [
          {
            ...runAxis(colors),
            label: undefined,
            // Room for its labels only (uPlot's default of 50 px left a blank band under them, taken from the plot).
            size: 30,
            values: (_u, ticks) => ticks.map((t) => labels[t - 1] ?? ''),
          },
          themedAxis(colors, {
            label: 'pass rate %',
            splits: () => y.splits,
            values: (_u, ticks) => ticks.map((t) => (labelled.has(t) ? `${t}%` : '')),
            size: 56,
          }),
        ],
        series: [
          { label: 'run' },
          {
            label: 'pass rate',
            stroke: colors.good,
            fill: colors.goodFill,
            width: 2,
            points: { show: true, size: 6 },
          },
        ],
        legend: { show: false },
        cursor: { points: { size: 10 }, drag: { x: false, y: false } },
        hooks: {
          init: [
            (u) => {
              u.over.appendChild(tip);
              u.over.style.cursor = 'pointer';
              u.over.addEventListener('click', () => {
                const idx = u.cursor.idx;
                if (idx !== null && idx !== undefined && points[idx]) {
                  open.current?.(points[idx].runId);
                }
              });
            },
          ],
          setCursor: [
            (u) => {
              const idx = u.cursor.idx;
              const point = idx === null || idx === undefined ? undefined : points[idx];
              if (!point || idx === null || idx === undefined) {
                tip.hidden = true;
                return;
              }
              const rate = rates[idx];
              tip.textContent = '';
              const title = document.createElement('strong');
              title.textContent = point.name;
              const detail = document.createElement('span');
              detail.textContent = `${rate === null ? 'nothing ran' : `${rate}% passed`} · ${point.counts.failed + point.counts.broken} failed · ${formatDate(point.startedAt)}`;
              tip.append(title, detail);
              tip.hidden = false;
              const left = u.valToPos(xs[idx], 'x');
              const width = u.over.clientWidth;
              // Beside the point, on the side with room.
              tip.style.left = left > width / 2 ? '' : `${left + 12}px`;
              tip.style.right = left > width / 2 ? `${width - left + 12}px` : '';
            },
          ],
        },
      },
      [xs, rates],
      el,
    );
    const resize = () => chart.setSize({ width: Math.max(280, el.clientWidth), height: 124 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      chart.destroy();
    };
  }, [points, colors]);
  const last = points.at(-1);
  const summary = last?.passRate == null ? '' : `; the latest, ${last.name}, ${passRate(last.counts)}`;
  return (
    <div
      ref={box}
      className="chart"
      role="img"
      aria-label={`Pass rate over the last ${points.length} runs${summary}`}
    />
  );
}
