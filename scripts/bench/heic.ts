import { readFileSync } from 'node:fs';
import { defaultProcessor, imagingJob } from './processor';

/**
 * `tsx scripts/bench/heic.ts file.heic`: what a HEIC upload costs, in a fresh process: the first job (which loads
 * libheif's WebAssembly), then warm jobs, and the peak RSS. HEIC files cannot be made by sharp, so this takes one.
 */
async function main(): Promise<void> {
  const file = process.argv[2];
  if (!file) throw new Error('usage: heic.ts file.heic');
  const input = readFileSync(file);
  const processor = await defaultProcessor();
  const rssBefore = process.resourceUsage().maxRSS / 1024;
  const times: number[] = [];
  for (let run = 0; run < 6; run += 1) {
    const start = process.hrtime.bigint();
    await imagingJob(processor, input);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const warm = times.slice(1).sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({ bytes: input.length, firstMs: Math.round(times[0] ?? 0), warmP50Ms: Math.round(warm[Math.floor(warm.length / 2)] ?? 0), rssBeforeMiB: Math.round(rssBefore), peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`,
  );
}

void main();
