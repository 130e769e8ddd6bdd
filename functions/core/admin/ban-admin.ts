import { AdminError } from './admin-error';
import { bansCovering, canonicalRange } from '../moderation/moderation';
import type { Ban, BanList, Clock } from '../ports';

/**
 * The operator's bans (`npm run admin -- ban`, `unban`, `bans`): address ranges refused uploads, kept in one item, each
 * for good or until a time.
 */
export class BanAdmin {
  constructor(private readonly deps: { moderation: BanList; clock: Clock }) {}

  /** Bans a range (an address or CIDR, IPv4 or IPv6) from uploading, for `forMs` or for good. */
  async add(rangeText: string, forMs: number | undefined): Promise<Ban> {
    const range = canonicalRange(rangeText);
    if (!range) throw new AdminError(notARange(rangeText));
    const nowMs = this.deps.clock.nowMs();
    const ban = { range, untilMs: forMs === undefined ? null : nowMs + forMs };
    await this.deps.moderation.add(ban);
    // the bans live in one item: the ones over are dropped as new ones come, so that it stays small
    const over = (await this.deps.moderation.all()).filter((old) => old.untilMs !== null && old.untilMs <= nowMs);
    for (const old of over) await this.deps.moderation.remove(old.range);
    return ban;
  }

  /** Lifts a ban; answers the bans in force that still cover all of its range. */
  async lift(rangeText: string): Promise<{ range: string; stillBannedBy: Ban[] }> {
    const range = canonicalRange(rangeText);
    if (!range) throw new AdminError(notARange(rangeText));
    if (!(await this.deps.moderation.remove(range))) {
      const covering = bansCovering(range, await this.inForce());
      const by = covering.length > 0 ? `; it is within the ban of ${covering.map((ban) => ban.range).join(', ')}` : '';
      throw new AdminError(`no ban of ${range}${by}`);
    }
    return { range, stillBannedBy: bansCovering(range, await this.inForce()) };
  }

  /** The bans in force. */
  async inForce(): Promise<Ban[]> {
    const nowMs = this.deps.clock.nowMs();
    return (await this.deps.moderation.all()).filter((ban) => ban.untilMs === null || ban.untilMs > nowMs);
  }
}

/** Why a range is refused: an IPv4-mapped one wider than the mapped space is named as such. */
function notARange(text: string): string {
  const mapped = /^\s*::ffff:/i.test(text)
    ? ' (an IPv4-mapped range needs a prefix of 96 or more; give its IPv4 range instead)'
    : '';
  return `not an address or CIDR range: ${text}${mapped}`;
}
