import ipaddr from 'ipaddr.js';
import { UploadError } from './errors';
import type { Clock } from './ports';
import type { Ban, BanList, BlockList } from './ports';

export type { Ban, BanList, BlockList } from './ports';

/**
 * The operator's refusals (`npm run admin`, `docs/operations.md`): address ranges banned from uploading, and the
 * fingerprints (md5) of images taken down with `--block`, which may not be uploaded again.
 */

/**
 * A range as given (`203.0.113.7`, `203.0.113.0/24`, `2001:db8::/32`) in canonical CIDR form; undefined if none. An
 * IPv4-mapped range (`::ffff:203.0.113.0/120`) is its IPv4 range, as clients are compared as IPv4 addresses; one wider
 * than the mapped space (a prefix under 96) is none.
 */
export function canonicalRange(text: string): string | undefined {
  const trimmed = text.trim();
  try {
    if (trimmed.includes('/')) {
      const [address, prefix] = ipaddr.parseCIDR(trimmed);
      if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress())
        return prefix < 96 ? undefined : canonicalRange(`${address.toIPv4Address().toString()}/${prefix - 96}`);
      const network =
        address.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(trimmed) : ipaddr.IPv6.networkAddressFromCIDR(trimmed);
      return `${network.toString()}/${prefix}`;
    }
    const address = ipaddr.process(trimmed);
    return `${address.toString()}/${address.kind() === 'ipv4' ? 32 : 128}`;
  } catch {
    return undefined;
  }
}

/** Whether an address falls in a range (an IPv4-mapped IPv6 address counts as its IPv4 address). */
export function inRange(ip: string, range: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.process(ip);
  const [network, prefix] = ipaddr.parseCIDR(range);
  return address.kind() === network.kind() && address.match(network, prefix);
}

/**
 * The checks an upload passes before anything is taken: its address is not banned (the ban list is cached like the
 * key, so a ban is in force within `BAN_CACHE_SECONDS`), and later its bytes are not blocked.
 */
export class UploadGate {
  private cached: { bans: Ban[]; readAtMs: number } | undefined;

  constructor(
    private readonly bans: Pick<BanList, 'all'>,
    private readonly blocks: Pick<BlockList, 'isBlocked'>,
    private readonly clock: Clock,
    private readonly cacheMs: number,
  ) {}

  async admit(ip: string): Promise<void> {
    const nowMs = this.clock.nowMs();
    if (!this.cached || nowMs - this.cached.readAtMs >= this.cacheMs) {
      this.cached = { bans: await this.bans.all(), readAtMs: nowMs };
    }
    const banned = this.cached.bans.some((ban) => (ban.untilMs === null || ban.untilMs > nowMs) && inRange(ip, ban.range));
    if (banned) throw new UploadError('Banned', 'Uploads from your address are not allowed');
  }

  async checkBytes(md5: string): Promise<void> {
    if (await this.blocks.isBlocked(md5))
      throw new UploadError('Blocked', 'This image was taken down and may not be uploaded again');
  }
}
