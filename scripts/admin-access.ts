import { newApiKey } from '../functions/adapters/operator-parameters';
import { jsonOf, parseDuration, plural, UsageError, utc, type Verb } from './admin-verbs';

/** The verbs of who may upload: address bans, and the API key. */
export const ACCESS_VERBS: Record<string, Verb> = {
  ban: {
    args: ['RANGE'],
    options: ['for'],
    summary: 'refuse uploads from an address or CIDR range (IPv4, IPv6), for good or for a time',
    more: '--for DURATION: 30m, 12h, 7d, 2w, or PT10M, P7D.',
    async run({ admin, args, values, print, inForce }) {
      const ban = await admin.bans.add(args[0] ?? '', values.for === undefined ? undefined : parseDuration(values.for));
      print(`banned ${ban.range} ${ban.untilMs === null ? 'for good' : `until ${utc(ban.untilMs)}`} (${inForce})`);
    },
  },
  unban: {
    args: ['RANGE'],
    options: [],
    summary: 'lift a ban; says so when a wider ban still covers the range',
    async run({ admin, args, print, warn, inForce }) {
      const { range, stillBannedBy } = await admin.bans.lift(args[0] ?? '');
      print(`lifted the ban of ${range} (${inForce})`);
      if (stillBannedBy.length > 0) {
        const wider = stillBannedBy.map((ban) => ban.range).join(', ');
        warn(
          `${range} is still refused: ${plural(stillBannedBy.length, 'ban', 'bans')} of ${wider} ${stillBannedBy.length === 1 ? 'covers' : 'cover'} it`,
        );
      }
    },
  },
  bans: {
    args: [],
    options: ['json'],
    summary: 'the bans in force',
    async run({ admin, values, print }) {
      const bans = await admin.bans.inForce();
      if (values.json) return print(jsonOf(bans));
      if (bans.length === 0) return print('no bans');
      print('range\tuntil');
      for (const ban of bans) print(`${ban.range}\t${ban.untilMs === null ? 'for good' : utc(ban.untilMs)}`);
    },
  },
  key: {
    args: ['show|rotate', '[NEW_KEY]'],
    options: [],
    summary: 'show the API key, or rotate it (to NEW_KEY, or a new random one)',
    more: `In force within PARAMETERS_CACHE_SECONDS (30 s by default): clients with the old key are refused from then
on. The key is the stack's /api-key parameter (SSM), or the local service's. A NEW_KEY that begins with - goes after
--: key rotate -- -MyKey...`,
    async run({ args, key, print }) {
      const [action, given] = args;
      if (action === 'show') {
        if (given !== undefined) throw new UsageError(`key show: unexpected argument ${given}`);
        const value = await key.read();
        return print(value === undefined || value === '' ? 'no API key is set (uploads answer 503)' : value);
      }
      if (action !== 'rotate') throw new UsageError(`key: say show or rotate, not ${action ?? 'nothing'}`);
      if (given !== undefined && !/^[\x21-\x7e]{16,128}$/.test(given))
        throw new UsageError('key rotate: a key is 16 to 128 printable characters, no spaces');
      const value = given ?? newApiKey();
      await key.write(value);
      print(value);
      print('rotated: in force within PARAMETERS_CACHE_SECONDS (30 s by default); the old key is refused from then on');
    },
  },
};
