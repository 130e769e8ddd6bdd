/** The operator's lists: bans, blocked pictures and bytes, reports. */

/** An address range banned from uploading, until a moment or for good. */
export interface Ban {
  /** A CIDR range in canonical form: `203.0.113.0/24`, `2001:db8::/32`; a single address is a /32 or /128. */
  range: string;
  untilMs: number | null;
}

export interface BanList {
  all(): Promise<Ban[]>;
  add(ban: Ban): Promise<void>;
  /** Removes a ban; false when there was none of that range. */
  remove(range: string): Promise<boolean>;
}

export interface BlockList {
  /** Whether any of these fingerprints (md5) is blocked: one read for all. */
  anyBlocked(md5s: readonly string[]): Promise<boolean>;
  block(md5: string, reason: string, nowMs: number): Promise<void>;
  /** Lifts a fingerprint's block; false when it had none. */
  unblock(md5: string): Promise<boolean>;
  /** Every blocked fingerprint (an operator's tool: the whole table is read). */
  blockedBytes(): Promise<BlockedBytes[]>;
}

export interface BlockedBytes {
  md5: string;
  reason: string;
  blockedAtMs: number;
}

/** A viewer's report of an image (`docs/moderation.md`, "Reports"). */
export interface Report {
  imageId: number;
  clientIp: string;
  /** One of `REPORT_REASONS`' keys. */
  reason: string;
  /** What the viewer added, up to 500 characters; empty when nothing. */
  note: string;
  atMs: number;
}

/** Viewers' reports of images, one per client and image. */
export interface ReportList {
  /** Keeps a report; false, keeping nothing, when this client reported this image already. */
  add(report: Report): Promise<boolean>;
  /** Every report, page by page (an operator's tool: the whole table is read). */
  all(): AsyncIterable<Report[]>;
  /** Removes the reports of an image (it was taken down, or is gone); how many there were. */
  resolve(imageId: number): Promise<number>;
}
