/** The median of some measurements (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** The median of the ratios of each measurement to the one taken next to it (`others`, in the same order). */
export function medianOfRatios(values: readonly number[], others: readonly number[]): number {
  return median(values.map((value, index) => value / (others[index] ?? value)));
}

/** The ratio of two sums of measurements taken side by side: what they cost together, as a bill counts it. */
export function ratioOfSums(values: readonly number[], others: readonly number[]): number {
  const sum = (list: readonly number[]): number => list.reduce((total, value) => total + value, 0);
  return sum(values) / sum(others);
}
