import { useMemo } from 'react';
import type uPlot from 'uplot';
import { useMediaQuery } from './use-media-query';

/**
 * The colours a chart draws with, read from the page's CSS variables for the colour scheme in use. uPlot draws its
 * axes on a canvas, where CSS does not reach: without them its labels were near-black on the dark background.
 */
export interface ChartColors {
  /** Axis labels and tick values. */
  text: string;
  /** Grid lines, ticks and the axis line. */
  grid: string;
  /** The pass-rate line, and the area under it. */
  good: string;
  goodFill: string;
  /** The duration line. */
  accent: string;
}

const VARIABLES: Record<keyof ChartColors, [name: string, fallback: string]> = {
  text: ['--chart-text', '#5c6370'],
  grid: ['--chart-grid', 'rgba(0, 0, 0, 0.1)'],
  good: ['--good', '#1d6b3a'],
  goodFill: ['--chart-fill', 'rgba(29, 107, 58, 0.12)'],
  accent: ['--accent', '#1f5fbf'],
};

export function chartColors(root: Element = document.documentElement): ChartColors {
  const style = getComputedStyle(root);
  const read = ([name, fallback]: [string, string]) => style.getPropertyValue(name).trim() || fallback;
  return {
    text: read(VARIABLES.text),
    grid: read(VARIABLES.grid),
    good: read(VARIABLES.good),
    goodFill: read(VARIABLES.goodFill),
    accent: read(VARIABLES.accent),
  };
}

const DARK = '(prefers-color-scheme: dark)';

/** The chart colours of the scheme in use, read again whenever the system switches between light and dark. */
export function useChartColors(): ChartColors {
  const dark = useMediaQuery(DARK);
  // Read again when the scheme changes: the CSS variables' values follow it.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => chartColors(), [dark]);
}

/** An axis drawn in the scheme's colours. */
export function themedAxis(colors: ChartColors, axis: uPlot.Axis): uPlot.Axis {
  return {
    stroke: colors.text,
    grid: { stroke: colors.grid, width: 1 },
    ticks: { stroke: colors.grid, width: 1 },
    border: { show: false },
    ...axis,
  };
}

/** Steps between labelled runs: whole runs only, as few as the width allows (uPlot picks the first that fits). */
export const RUN_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000];

/**
 * The runs labelled (and gridded) on an axis from `min` to `max` every `step`: whole runs only. uPlot's own splits
 * of a range padded by half a run fell on 2.5, 7.5 with a fractional step.
 */
export function runSplits(min: number, max: number, step: number): number[] {
  const whole = Math.max(1, Math.round(step));
  const splits: number[] = [];
  for (let run = Math.ceil(min / whole) * whole; run <= max; run += whole) {
    if (run >= 1) {
      splits.push(run);
    }
  }
  return splits;
}

/** The x axis of a chart over runs (1 the oldest shown): whole runs, in the scheme's colours. */
export function runAxis(colors: ChartColors): uPlot.Axis {
  return themedAxis(colors, {
    label: 'run',
    incrs: RUN_STEPS,
    splits: (_u, _axis, min, max, step) => runSplits(min, max, step),
    values: (_u, ticks) => ticks.map((t) => String(t)),
  });
}
