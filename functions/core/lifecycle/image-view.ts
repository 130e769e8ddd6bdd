import { objectUrl, viewerUrl } from '../image/links';
import type { ImageRecord, StoredFile } from '../ports';

/** A file of an image as a page shows it. */
export interface FileView {
  url: string;
  width: number;
  height: number;
  size: number;
  mime: string;
}

/**
 * What a page may show of an image: its public facts and links, never what the record keeps for the service alone
 * (the uploader's IP, delete-token hashes, the fingerprint).
 */
export interface ImageView {
  idEncoded: string;
  viewerUrl: string;
  title: string;
  description: string | null;
  nsfw: boolean;
  animated: boolean;
  createdAtMs: number;
  expiresAtMs: number | null;
  views: number;
  original: FileView;
  medium: FileView;
  thumb: FileView;
}

export function toImageView(record: ImageRecord, publicUrl: string, idEncoded: string): ImageView {
  const file = (stored: StoredFile): FileView => ({
    url: objectUrl(publicUrl, stored.key),
    width: stored.width,
    height: stored.height,
    size: stored.size,
    mime: stored.mime,
  });
  return {
    idEncoded,
    viewerUrl: viewerUrl(publicUrl, idEncoded),
    title: record.title,
    description: record.description,
    nsfw: record.nsfw,
    animated: record.animated,
    createdAtMs: record.createdAtMs,
    expiresAtMs: record.expiresAtMs,
    views: record.views,
    original: file(record.original),
    medium: file(record.medium),
    thumb: file(record.thumb),
  };
}
