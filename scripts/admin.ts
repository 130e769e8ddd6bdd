import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { buildPurger } from '../functions/api/purger';
import { buildStores, clock } from '../functions/api/stores';
import { loadConfig } from '../functions/config';
import { Admin } from '../functions/core/admin';
import { AdminError } from '../functions/core/admin-error';
import { DependencyError } from '../functions/core/errors';
import { formatDateTime, formatSize } from '../functions/core/formatting';
import { IdCodecs } from '../functions/core/id-codec';
import { parseIsoDuration } from '../functions/core/upload-request';
import { blockedCropHashes } from '../functions/imaging/centred-crops';
import { BLOCK_COMMANDS, BLOCK_USAGE, runBlocks } from './admin-blocks';
import { terminalSafe } from './terminal-text';
import type { Logger } from '../functions/core/ports';
import { NO_METRICS } from '../functions/core/metrics';

/**
 * `npm run admin -- [TARGET] COMMAND ...`: the operator's tools (docs/operations.md), run with the operator's own AWS
 * credentials (IAM decides who may) against the local service or a deployed stack; no public endpoint.
 */
const USAGE = `usage: npm run admin -- [--data-dir DIR | --stack NAME | --outputs FILE] COMMAND
  takedown REFERENCE [--block] [--similar]
                                 remove an image (viewer URL, file URL or id) for every upload of it, and
                                 every other image of the same bytes; --similar: and of the same picture
                                 (within 31 PDQ bits); --block refuses those bytes and that picture
                                 (re-encoded, resized, edited: docs/moderation.md) from then on
  restore REFERENCE              bring back an image removed by its delete link or its expiry, files and record,
                                 within keepDeletedDays (30 by default); never one taken down
  reports [--json]               images viewers reported, most reported first, with their reasons and notes;
                                 a takedown resolves an image's reports
  similar REFERENCE [--within N] [--json]
                                 stored images whose picture is near this one's, nearest first (default 63 bits)
${BLOCK_USAGE}
  ban RANGE [--for DURATION]     refuse uploads from an address or CIDR range (IPv4, IPv6), for good or for 30m, 12h, 7d...
  unban RANGE                    lift a ban
  bans                           the bans in force
  list [--since DURATION] [--ip ADDRESS|CIDR] [--limit N] [--json]
                                 recent uploads, newest first (default: the last day, 50)
  stats [--days N] [--json]      uploads, bytes and refusals per day (UTC; default 7 days)
target: the local service's DATA_DIR (default .data), a deployed stack by name, or cdk deploy's --outputs-file
  (--id-padding N: the stack's ID_PADDING, for a stack deployed before it had the IdPadding output)`;

/** What the commands need to know of where the service runs. */
export interface Target {
  env: Record<string, string>;
  publicUrl: string;
  idPadding: number;
  /** The local service's stand-ins (`npm start`), rather than a stack's stores. */
  local?: boolean;
}

/** `30m`, `12h`, `7d`, `2w`, seconds, or an ISO-8601 duration as the API takes for expirations (`PT10M`, `P7D`), in ms. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const iso = /^p/i.test(trimmed) ? parseIsoDuration(trimmed.toUpperCase()) : undefined;
  if (iso !== undefined && iso > 0) return iso * 1000;
  const match = /^(\d+)(s|m|h|d|w)?$/.exec(trimmed);
  if (!match || Number(match[1]) === 0) throw new AdminError(`not a duration: ${text} (say 30m, 12h, 7d, 2w, or PT10M, P7D)`);
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[(match[2] ?? 's') as 's'];
  return Number(match[1]) * unit * 1000;
}

/** The local service: its endpoints, names and credentials from `DATA_DIR/endpoints.json`. */
function localTarget(dataDir: string): Target {
  const file = join(resolve(dataDir), 'endpoints.json');
  if (!existsSync(file)) throw new AdminError(`no ${file}: start the service once (npm start), or name a stack`);
  const endpoints = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string | number | undefined>;
  const text = (name: string): string => String(endpoints[name] ?? '');
  const env: Record<string, string> = {
    BUCKET_NAME: text('bucket'),
    TABLE_NAME: text('table'),
    PARAMETER_PREFIX: text('parameterPrefix'),
    AWS_ENDPOINT_URL_S3: text('s3'),
    AWS_ENDPOINT_URL_DYNAMODB: text('dynamodb'),
    AWS_ENDPOINT_URL_SSM: text('ssm'),
    AWS_REGION: text('region') || 'us-east-1',
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
  };
  // the stand-ins' own credentials; external stores use the operator's, from the usual variables
  if (endpoints['accessKeyId']) env['AWS_ACCESS_KEY_ID'] = text('accessKeyId');
  if (endpoints['secretAccessKey']) env['AWS_SECRET_ACCESS_KEY'] = text('secretAccessKey');
  return {
    env,
    publicUrl: text('publicUrl') || 'http://localhost:3000',
    idPadding: Number(endpoints['idPadding'] ?? 999),
    // external stores (AWS_ENDPOINT_URL_* at npm start) are named by their endpoints, not "the local service"
    local: Boolean(endpoints['accessKeyId']),
  };
}

/** A deployed stack, from its outputs (BucketName, TableName, BaseUrl, ApiKeyParameter, IdPadding). */
function stackTarget(outputs: Record<string, string>, idPadding: string | undefined): Target {
  for (const name of ['BucketName', 'TableName', 'BaseUrl', 'ApiKeyParameter']) {
    if (!outputs[name]) throw new AdminError(`the stack has no output ${name}: is it this service's stack?`);
  }
  return {
    env: {
      BUCKET_NAME: outputs['BucketName'] ?? '',
      TABLE_NAME: outputs['TableName'] ?? '',
      PARAMETER_PREFIX: (outputs['ApiKeyParameter'] ?? '').replace(/\/api-key$/, ''),
    },
    publicUrl: (outputs['BaseUrl'] ?? '').replace(/\/+$/, ''),
    // stacks deployed before the output existed: the default, or --id-padding
    idPadding: wholeNumber('--id-padding', idPadding ?? outputs['IdPadding'] ?? '999', 0, 1_000_000),
  };
}

/** A whole number option within bounds, or a clear refusal. */
export function wholeNumber(option: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || value < min || value > max)
    throw new AdminError(`${option} must be a whole number from ${min} to ${max}: ${text}`);
  return value;
}

async function outputsOfStack(name: string): Promise<Record<string, string>> {
  const cloudformation = new CloudFormationClient({});
  try {
    const { Stacks } = await cloudformation.send(new DescribeStacksCommand({ StackName: name }));
    return Object.fromEntries((Stacks?.[0]?.Outputs ?? []).map((output) => [output.OutputKey ?? '', output.OutputValue ?? '']));
  } finally {
    cloudformation.destroy();
  }
}

function outputsOfFile(file: string): Record<string, string> {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Record<string, Record<string, string>>;
  const stacks = Object.values(parsed);
  if (stacks.length !== 1) throw new AdminError(`${file} holds ${stacks.length} stacks' outputs: name one with --stack`);
  return stacks[0] ?? {};
}

const quiet: Logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

export function adminFor(target: Target): { admin: Admin; close(): void } {
  Object.assign(process.env, target.env);
  const env = { ...process.env, ...target.env, PUBLIC_URL: target.publicUrl };
  const config = loadConfig(env);
  // of the settings, only what the commands use: the ids' salt and the distribution (docs/operations.md, "Who may run it")
  const stores = buildStores(config, env, NO_METRICS, {
    idSalt: config.parameters.idSalt,
    distributionId: config.parameters.distributionId,
  });
  const admin = new Admin({
    images: stores.images,
    objects: stores.objects,
    duplicates: stores.duplicates,
    purger: buildPurger(stores.settings, NO_METRICS),
    reports: stores.reports,
    logger: quiet,
    codecs: new IdCodecs(() => stores.settings.idSalt(), target.idPadding),
    moderation: stores.moderation,
    pictureBlocks: stores.pictureBlocks,
    pictureCrops: (original) => blockedCropHashes(original),
    stats: stores.stats,
    staged: stores.staged,
    clock,
    publicUrl: target.publicUrl,
  });
  return { admin, close: () => stores.db.destroy() };
}

const utc = (epochMs: number): string => `${formatDateTime(epochMs, 'UTC')} UTC`;

export async function main(
  argv: readonly string[],
  print: (line: string) => void,
  progress: (line: string) => void = () => undefined,
): Promise<number> {
  // an operator's machine may run Node 20: the SDK's notice about it is not this tool's output
  process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] = 'true';
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      'data-dir': { type: 'string' },
      stack: { type: 'string' },
      outputs: { type: 'string' },
      'id-padding': { type: 'string' },
      block: { type: 'boolean', default: false },
      similar: { type: 'boolean', default: false },
      within: { type: 'string' },
      for: { type: 'string' },
      since: { type: 'string', default: '1d' },
      ip: { type: 'string' },
      limit: { type: 'string', default: '50' },
      days: { type: 'string', default: '7' },
      json: { type: 'boolean', default: false },
    },
  });
  const [command, argument] = positionals;
  const padding = values['id-padding'];
  const target = values.outputs
    ? stackTarget(outputsOfFile(values.outputs), padding)
    : values.stack
      ? stackTarget(await outputsOfStack(values.stack), padding)
      : localTarget(values['data-dir'] ?? process.env['DATA_DIR'] ?? '.data');
  const needsArgument = ['takedown', 'restore', 'similar', 'ban', 'unban'].includes(command ?? '');
  if (!command || (needsArgument && !argument)) {
    print(USAGE);
    return 2;
  }
  const opened = adminFor(target);
  try {
    const done = BLOCK_COMMANDS.includes(command)
      ? await runBlocks(opened.admin, positionals, values.json, print, progress)
      : await run(opened.admin, command, argument, values, print);
    if (done === undefined) print(USAGE);
    return done ?? 2;
  } catch (error) {
    throw unreachable(error, target) ?? error;
  } finally {
    opened.close();
  }
}

/**
 * A store that could not be reached, said so: the local service not running (its stand-ins answer only while
 * `npm start` runs), or which store failed and why; undefined for any other error.
 */
function unreachable(error: unknown, target: Target): AdminError | undefined {
  if (!(error instanceof DependencyError)) return undefined;
  const causes: unknown[] = [];
  for (let cause: unknown = error.cause; cause instanceof Error && causes.length < 10; cause = cause.cause) causes.push(cause);
  const refused = causes.some((cause) => (cause as NodeJS.ErrnoException).code === 'ECONNREFUSED');
  if (target.local && refused) return new AdminError('the local service is not running: start it with `npm start`');
  const last = causes.at(-1);
  return new AdminError(`${error.what} failed: ${last instanceof Error ? last.message || last.name : 'no answer'}`);
}

async function run(
  admin: Admin,
  command: string,
  argument: string | undefined,
  values: {
    block: boolean;
    similar: boolean;
    within?: string | undefined;
    for?: string | undefined;
    since: string;
    ip?: string | undefined;
    limit: string;
    days: string;
    json: boolean;
  },
  print: (line: string) => void,
): Promise<number> {
  switch (command) {
    case 'takedown': {
      const done = await admin.takedown(argument ?? '', { block: values.block, similar: values.similar });
      for (const image of done.removed) {
        const kind = image.distance === undefined ? 'the same bytes' : `a similar picture, ${image.distance} bits apart`;
        const copy = image.idEncoded === done.idEncoded ? '' : ` (${kind}, uploaded from ${image.clientIp})`;
        print(`took down ${image.idEncoded}${copy}: removed ${image.files.join(', ')}, its record, and its copies at the CDN`);
      }
      if (done.blocked.length > 0)
        print(`blocked its bytes (md5 ${done.blocked.join(', ')}): the same image uploaded again is refused`);
      if (done.resolvedReports > 0) print(`resolved ${done.resolvedReports} viewers' reports of it`);
      if (done.blockedPictures.length > 0) {
        const crops = done.blockedCrops > 0 ? ` and ${done.blockedCrops} of its crops` : ' (its crops could not be hashed)';
        print(`blocked its picture (PDQ ${done.blockedPictures.join(', ')})${crops}: edited copies of it are refused too`);
      }
      return 0;
    }
    case 'restore': {
      const done = await admin.restore(argument ?? '');
      const expiry = done.expiresAtMs === null ? 'no expiry' : `expires ${utc(done.expiresAtMs)}`;
      print(`restored ${done.idEncoded} (${expiry}): ${done.files.join(', ')} and its record; ${done.viewerUrl}`);
      return 0;
    }
    case 'reports': {
      const reported = await admin.reports();
      if (values.json) print(JSON.stringify(reported, null, 2));
      else {
        if (reported.length === 0) print('no reports');
        for (const image of reported) {
          const reasons = Object.entries(image.reasons)
            .map(([reason, count]) => `${reason} ${count}`)
            .join(', ');
          print(`${image.idEncoded}\t${image.viewerUrl}\t${image.count} reports (${reasons})\tlast ${utc(image.lastAtMs)}`);
          for (const note of image.notes) print(`\t${JSON.stringify(note)}`);
        }
      }
      return 0;
    }
    case 'similar': {
      const within = values.within === undefined ? undefined : wholeNumber('--within', values.within, 0, 128);
      const near = await admin.similar(argument ?? '', within);
      if (values.json) print(JSON.stringify(near, null, 2));
      else {
        if (near.length === 0) print('no similar images');
        for (const image of near)
          print(`${image.idEncoded}\t${image.viewerUrl}\t${image.distance} bits\t${image.clientIp}\t${utc(image.createdAtMs)}`);
      }
      return 0;
    }
    case 'ban': {
      const ban = await admin.ban(argument ?? '', values.for === undefined ? undefined : parseDuration(values.for));
      print(
        `banned ${ban.range} ${ban.untilMs === null ? 'for good' : `until ${utc(ban.untilMs)}`} (in force within MODERATION_CACHE_SECONDS, 30 s by default)`,
      );
      return 0;
    }
    case 'unban':
      print(`lifted the ban of ${await admin.unban(argument ?? '')} (in force within MODERATION_CACHE_SECONDS)`);
      return 0;
    case 'bans': {
      const bans = await admin.bans();
      if (bans.length === 0) print('no bans');
      for (const ban of bans) print(`${ban.range}\t${ban.untilMs === null ? 'for good' : `until ${utc(ban.untilMs)}`}`);
      return 0;
    }
    case 'list': {
      // the NSFW column: its mark and the classifier's score ("nsfw 87%", "- 3%", "-" where it did not run)
      const nsfwColumn = (upload: { nsfw: boolean; nsfwScore: number | null }): string =>
        `${upload.nsfw ? 'nsfw' : '-'}${upload.nsfwScore === null ? '' : ` ${Math.round(upload.nsfwScore * 100)}%`}`;
      const uploads = await admin.list({
        sinceMs: clock.nowMs() - parseDuration(values.since),
        ...(values.ip ? { ip: values.ip } : {}),
        limit: wholeNumber('--limit', values.limit, 1, 100_000),
      });
      if (values.json) print(JSON.stringify(uploads, null, 2));
      else {
        if (uploads.length === 0) print('no uploads');
        for (const upload of uploads) {
          const expiry = upload.expiresAtMs === null ? '' : `\texpires ${utc(upload.expiresAtMs)}`;
          print(
            `${upload.idEncoded}\t${upload.viewerUrl}\t${formatSize(upload.size)}\t${upload.clientIp}\t${utc(upload.createdAtMs)}\t${nsfwColumn(upload)}${expiry}`,
          );
        }
      }
      return 0;
    }
    case 'stats': {
      const days = await admin.stats(wholeNumber('--days', values.days, 1, 3660));
      if (values.json) print(JSON.stringify(days, null, 2));
      else {
        print('day (UTC)\tuploads\tbytes\trefusals\twithout key\treports');
        for (const day of days)
          print(`${day.day}\t${day.uploads}\t${formatSize(day.bytes)}\t${day.refusals}\t${day.unauthenticated}\t${day.reports}`);
        const staged = await admin.staged();
        print(
          `staged now: ${staged.files} files, ${formatSize(staged.bytes)} (two-step uploads; removed once no token can use them)`,
        );
        // the sweep counts an upload once it settles its name claim: a day's figures trail it by that much
        print('uploads and bytes are counted by the sweep about 15 minutes after each upload (docs/operations.md)');
      }
      return 0;
    }
    default:
      print(USAGE);
      return 2;
  }
}

if (require.main === module) {
  // stored and imported text (notes, names, a bad line of a list) reaches the terminal only escaped
  // progress (a long import's steps) on a terminal only: piped, the output is the results alone
  const progress = (line: string): void => {
    if (process.stderr.isTTY) process.stderr.write(`${terminalSafe(line)}\n`);
  };
  main(process.argv.slice(2), (line) => process.stdout.write(`${terminalSafe(line)}\n`), progress)
    .then((code) => (process.exitCode = code))
    .catch((error: unknown) => {
      process.stderr.write(`${terminalSafe(error instanceof Error ? error.message : String(error))}\n`);
      process.exitCode = 1;
    });
}
