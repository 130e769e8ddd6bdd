import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import sharp from 'sharp';
import { md5Hex } from '../../functions/core/hashes';
import type { ImageProcessor } from '../../functions/core/ports';
import { Budget } from '../../functions/imaging/budget';
import { loadNsfwClassifier } from '../../functions/imaging/nsfw-classifier';
import { fingerprintOf } from '../../functions/fingerprint/fingerprint';
import { stillCopy } from '../../functions/imaging/fingerprint-copies';
import { median } from './median';
import { cpuOutsideHelpers, type Span, type ThreadCpu } from './thread-cpu';
import { defaultProcessor } from './processor';

/** What the parts of one upload cost on the rig's core (`cpu-rig.ts`): `measureParts`. */

export interface PartsAnswer {
  /** CPU of the classifier's run alone on the working copy (its worker thread's). */
  classifierMs: number;
  /** CPU of the fingerprint alone on the working copy, as the rig's uploads make it: no picture blocked, none compared. */
  fingerprintMs: number;
  /** The same with some picture blocked: the views only compared made too. */
  comparedFingerprintMs: number;
  /** CPU of the two md5s alone: the bytes as sent and as stored. */
  md5sMs: number;
  /** CPU of an upload whose imaging is done already: the service's own work, the md5s and the SDK's calls. */
  withoutImagingMs: number;
  /** The main thread's share of that, which the profile's times are scaled to. */
  withoutImagingMainMs: number;
  /** Main-thread ms per upload of those, from a CPU profile, by part. */
  profiled: Record<ProfiledPart, number>;
}

export type ProfiledPart = 'fingerprint' | 'md5s' | 'sdk' | 'gc' | 'sharp' | 'other';

/** Where a profile's sample goes: the first part any frame of its stack belongs to, from the leaf up. */
const PARTS: Array<{ part: ProfiledPart; url?: RegExp; name?: RegExp }> = [
  { part: 'gc', name: /^\(garbage collector\)$/ },
  {
    part: 'fingerprint',
    url: /functions\/(fingerprint\/|imaging\/fingerprint-copies\.ts)/,
  },
  { part: 'md5s', url: /functions\/core\/hashes\.ts/ },
  { part: 'sdk', url: /node_modules\/(@aws-sdk|@smithy|@aws-crypto|fast-xml-parser)\// },
  { part: 'sharp', url: /node_modules\/sharp\// },
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/**
 * The main thread's time of a profile, by part (ms), in `spans` only (the handler's own: the rig's making of each
 * event, between them, is not the upload's); idle time is left out.
 */
function byPart(profile: Profile, spans: readonly Span[]): Record<ProfiledPart, number> {
  const parent = new Map<number, number>();
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const partOf = new Map<number, ProfiledPart | 'idle'>();
  const classify = (id: number): ProfiledPart | 'idle' => {
    const known = partOf.get(id);
    if (known) return known;
    let found: ProfiledPart | 'idle' = 'other';
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = nodes.get(at)?.callFrame;
      if (!frame) break;
      if (frame.functionName === '(idle)') {
        found = 'idle';
        break;
      }
      const rule = PARTS.find((one) => (one.url?.test(frame.url) ?? false) || (one.name?.test(frame.functionName) ?? false));
      if (rule) {
        found = rule.part;
        break;
      }
    }
    partOf.set(id, found);
    return found;
  };
  const totals: Record<ProfiledPart, number> = { fingerprint: 0, md5s: 0, sdk: 0, gc: 0, sharp: 0, other: 0 };
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  let at = profile.startTime;
  for (let i = 0; i < samples.length; i += 1) {
    at += deltas[i] ?? 0;
    if (!spans.some(({ fromUs, toUs }) => at >= fromUs && at < toUs)) continue;
    const part = classify(samples[i] ?? 0);
    // a sample's time is the delta to the next one
    if (part !== 'idle') totals[part] += (deltas[i + 1] ?? 0) / 1000;
  }
  return totals;
}

type Uploader = (options?: object) => (round: number) => Promise<{ cpuMs: number; threads: ThreadCpu; span: Span }>;

/**
 * The parts of an upload of `input`, over `rounds` runs each. The classifier, the fingerprint and the md5s run alone on
 * the copies an upload makes, their CPU counted but V8's helpers' (the rig counts those for the whole upload). The
 * SDK's share comes from a CPU profile of uploads by a handler whose imaging is done already (its answer made once,
 * handed back at once), its samples taken while the handler ran (not while the rig made the next event): with no
 * libvips thread taking the core meanwhile, the profile's time is the main thread's.
 */
export async function measureParts(input: Buffer, rounds: number, uploader: Uploader): Promise<PartsAnswer> {
  // the uploads run without the classifier (`BENCH_NSFW_POLICY=off`): then its part is none, and no process holds it
  const policy = process.env['BENCH_NSFW_POLICY'];
  const processor = await defaultProcessor(policy ? { NSFW_POLICY: policy } : {});
  const processed = await processor.process(input, { targetWidth: undefined });
  await processed.nsfwScoring;
  const done: ImageProcessor = {
    storedExtension: (bytes) => processor.storedExtension(bytes),
    start: () => ({
      decoding: Promise.resolve(),
      original: Promise.resolve({ image: processed.original, asSent: false }),
      processed: Promise.resolve({ ...processed, nsfwScoring: Promise.resolve({ score: 0, runMs: 0 }) }),
    }),
  };
  const uploadWithoutImaging = uploader({ imageProcessor: () => Promise.resolve(done) });
  const { data, info } = await sharp(input).autoOrient().resize({ width: 500 }).raw().toBuffer({ resolveWithObject: true });
  const working = { data, info, depth: 'uchar' as const };
  const classifier = policy === 'off' ? undefined : await loadNsfwClassifier();
  const alone = {
    classifier: [] as number[],
    fingerprint: [] as number[],
    comparedFingerprint: [] as number[],
    md5s: [] as number[],
    service: [] as number[],
    serviceMain: [] as number[],
  };
  const fingerprintCpu = async (compared: boolean): Promise<number> => {
    const span = cpuOutsideHelpers();
    const budget = new Budget(10);
    await fingerprintOf([await stillCopy(working, budget)], budget, { compared });
    return span.ms();
  };
  for (let round = 0; round < rounds + 2; round += 1) {
    let span = cpuOutsideHelpers();
    await classifier?.score({ data, width: info.width, height: info.height, channels: info.channels });
    const classifierMs = span.ms();
    const fingerprintMs = await fingerprintCpu(false);
    const comparedFingerprintMs = await fingerprintCpu(true);
    span = cpuOutsideHelpers();
    md5Hex(input);
    md5Hex(processed.original.bytes);
    const md5sMs = span.ms();
    const { cpuMs: serviceMs, threads } = await uploadWithoutImaging(round);
    // the first two warm up
    if (round < 2) continue;
    alone.classifier.push(classifierMs);
    alone.fingerprint.push(fingerprintMs);
    alone.comparedFingerprint.push(comparedFingerprintMs);
    alone.md5s.push(md5sMs);
    alone.service.push(serviceMs);
    alone.serviceMain.push(threads.main);
  }
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  const spans: Span[] = [];
  for (let round = 0; round < rounds; round += 1) spans.push((await uploadWithoutImaging(rounds + round)).span);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  // BENCH_PROFILE=FILE: the profile itself, for Chrome's DevTools or `node --cpu-prof`'s readers
  if (process.env['BENCH_PROFILE']) writeFileSync(process.env['BENCH_PROFILE'], JSON.stringify(profile));
  // the profiler's own work slows what it samples, and it samples the main thread's time while other threads have the
  // core: its times are scaled to the uploads' main-thread CPU measured without it
  const totals = byPart(profile as Profile, spans);
  const sampled = Object.values(totals).reduce((sum, ms) => sum + ms, 0) / rounds;
  const scale = median(alone.serviceMain) / sampled;
  const profiled = Object.fromEntries(Object.entries(totals).map(([part, ms]) => [part, (ms / rounds) * scale])) as Record<
    ProfiledPart,
    number
  >;
  return {
    classifierMs: median(alone.classifier),
    fingerprintMs: median(alone.fingerprint),
    comparedFingerprintMs: median(alone.comparedFingerprint),
    md5sMs: median(alone.md5s),
    withoutImagingMs: median(alone.service),
    withoutImagingMainMs: median(alone.serviceMain),
    profiled,
  };
}
