/**
 * The pass-rate axis's lower bound: the highest of these at or below the lowest rate shown, so the runs fill the
 * chart (a suite that sits at 96-99% reads on 95-100%, not as a flat line at the top of 0-100%).
 */
const FLOORS = [99, 98, 95, 90, 80, 60, 40, 0];

/** The y range (%, lower and upper) and its labelled values for the pass rates shown (nulls are runs with none). */
export function passRateRange(rates: (number | null)[]): { min: number; max: number; splits: number[] } {
  const shown = rates.filter((r): r is number => r !== null);
  const lowest = shown.length ? Math.min(...shown) : 0;
  const floor = FLOORS.find((f) => f <= lowest) ?? 0;
  const span = 100 - floor;
  const step = span <= 2 ? 0.5 : span <= 5 ? 1 : span <= 10 ? 2 : span <= 20 ? 5 : span <= 40 ? 10 : 25;
  const splits: number[] = [];
  for (let value = floor; value <= 100 + 1e-9; value += step) {
    splits.push(Math.round(value * 10) / 10);
  }
  // A little room below the floor and above 100%, so that no point is cut at an edge.
  const pad = span * 0.04;
  return { min: floor - pad, max: 100 + pad, splits };
}

/**
 * The grid values that carry a label: at most `most` of them, 100% always, every other one down from it while
 * there are more (the chart is low: six labels on 95-100% ran into each other). The others stay grid lines.
 */
export function labelledSplits(splits: number[], most = 3): Set<number> {
  const every = Math.max(1, Math.ceil(splits.length / most));
  const top = splits.length - 1;
  return new Set(splits.filter((_, i) => (top - i) % every === 0));
}

/** A run's short label on the chart's axis: its trailing build number (`#1221`), else its position. */
export function runLabel(name: string, position: number): string {
  const number = /(?:#|\bbuild\s*|\b)(\d{1,9})\s*$/i.exec(name.trim());
  return number ? `#${number[1]}` : String(position);
}
