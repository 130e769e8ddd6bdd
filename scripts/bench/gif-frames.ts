import { gifFramesWhole } from '../../functions/imaging/containers/gif-frames';
import { benchFixtures } from './fixtures';
import { median } from './median';
import { defaultProcessor, imagingJob } from './processor';

/**
 * `BENCH_PART=gif-frames` (`docs/imaging.md`, "Anything that does not decode whole"): the CPU of counting a GIF's LZW
 * pixels against the CPU of its whole imaging, the bench's animated GIF, in turns in one process (run it under
 * `taskset -c 1` for one core, as a Lambda has).
 */
export async function printGifFrames(rounds: number): Promise<void> {
  const gif = (await benchFixtures()).find((fixture) => fixture.name.startsWith('GIF'));
  if (!gif) throw new Error('the bench has no GIF');
  const processor = await defaultProcessor();
  const cpuMs = (): number => {
    const used = process.cpuUsage();
    return (used.user + used.system) / 1000;
  };
  for (let warm = 0; warm < 3; warm += 1) {
    await imagingJob(processor, gif.bytes);
    gifFramesWhole(gif.bytes);
  }
  const job: number[] = [];
  const count: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    let started = cpuMs();
    await imagingJob(processor, gif.bytes);
    job.push(cpuMs() - started);
    started = cpuMs();
    for (let again = 0; again < 10; again += 1) gifFramesWhole(gif.bytes);
    count.push((cpuMs() - started) / 10);
  }
  const [jobMs, countMs] = [median(job), median(count)];
  process.stdout.write(
    `| input | imaging CPU (ms) | LZW count CPU (ms) | share |\n| --- | --- | --- | --- |\n` +
      `| ${gif.name} | ${jobMs.toFixed(0)} | ${countMs.toFixed(1)} | ${((100 * countMs) / jobMs).toFixed(1)}% |\n`,
  );
}
