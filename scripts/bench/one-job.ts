import { readFileSync } from 'node:fs';
import { defaultProcessor, imagingJob } from './processor';
import { floorJob } from './floor';

/** Runs one job in a fresh process and prints its peak RSS: `one-job.ts <file> <service|floor>`. */
async function main(): Promise<void> {
  const [file, which] = process.argv.slice(2);
  if (!file || (which !== 'service' && which !== 'floor')) throw new Error('usage: one-job.ts <file> <service|floor>');
  const input = readFileSync(file);
  const processor = await defaultProcessor();
  const before = process.resourceUsage().maxRSS;
  if (which === 'service') await imagingJob(processor, input);
  else await floorJob(input);
  process.stdout.write(`${JSON.stringify({ beforeKiB: before, peakKiB: process.resourceUsage().maxRSS })}\n`);
}

void main();
