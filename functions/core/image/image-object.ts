import { formatDateTime, formatSize, howLongAgo } from './formatting';
import { deleteUrl, objectUrl, viewerUrl } from './links';
import type { ImageRecord, StoredFile } from '../ports';

/** A rendition (`thumb`, `medium`) as clients see it. */
export interface RenditionObject {
  filename: string;
  name: string;
  width: number;
  height: number;
  ratio: number;
  size: number;
  size_formatted: string;
  mime: string;
  extension: string;
  bits: number;
  channels: number | null;
  url: string;
}

/** The Image object of `docs/api.md`, section 3. */
export interface ImageObject {
  name: string;
  extension: string;
  size: number;
  width: number;
  height: number;
  date: string;
  date_gmt: string;
  title: string;
  description: string | null;
  nsfw: '0' | '1';
  storage_id: null;
  storage: 'datefolder';
  md5: string;
  original_filename: string;
  original_exifdata: Record<string, unknown> | null;
  views: string;
  views_label: string;
  id_encoded: string;
  filename: string;
  ratio: number;
  size_formatted: string;
  mime: string;
  bits: number;
  channels: number | null;
  url: string;
  url_viewer: string;
  url_short: string;
  delete_url: string;
  thumb: RenditionObject;
  medium: RenditionObject;
  display_url: string;
  how_long_ago: string;
  expiration_date_gmt: string | null;
  is_animated: '0' | '1';
}

export interface ImageObjectContext {
  publicUrl: string;
  timeZone: string;
  nowMs: number;
  idEncoded: string;
  deleteToken: string;
}

/** Builds the Image object of a record as an upload response shows it. */
export function toImageObject(record: ImageRecord, context: ImageObjectContext): ImageObject {
  const { publicUrl, idEncoded } = context;
  const filename = `${record.name}.${record.extension}`;
  const urlViewer = viewerUrl(publicUrl, idEncoded);
  const medium = toRenditionObject(record.medium, `${record.name}.md`, publicUrl);
  return {
    name: record.name,
    extension: record.extension,
    size: record.original.size,
    width: record.original.width,
    height: record.original.height,
    date: formatDateTime(record.createdAtMs, context.timeZone),
    date_gmt: formatDateTime(record.createdAtMs, 'UTC'),
    title: record.title,
    description: record.description,
    nsfw: record.nsfw ? '1' : '0',
    storage_id: null,
    storage: 'datefolder',
    md5: record.original.md5,
    original_filename: record.originalFilename,
    original_exifdata: record.exif,
    views: String(record.views),
    views_label: record.views === 1 ? 'view' : 'views',
    id_encoded: idEncoded,
    filename,
    ratio: record.original.width / record.original.height,
    size_formatted: formatSize(record.original.size),
    mime: record.original.mime,
    bits: record.original.bits,
    channels: record.original.channels,
    url: objectUrl(publicUrl, record.original.key),
    url_viewer: urlViewer,
    url_short: urlViewer,
    delete_url: deleteUrl(publicUrl, idEncoded, context.deleteToken),
    thumb: toRenditionObject(record.thumb, `${record.name}.th`, publicUrl),
    medium,
    display_url: medium.url,
    how_long_ago: howLongAgo(record.createdAtMs, context.nowMs),
    expiration_date_gmt: record.expiresAtMs === null ? null : formatDateTime(record.expiresAtMs, 'UTC'),
    is_animated: record.animated ? '1' : '0',
  };
}

function toRenditionObject(file: StoredFile, name: string, publicUrl: string): RenditionObject {
  return {
    filename: `${name}.${file.extension}`,
    name,
    width: file.width,
    height: file.height,
    ratio: file.width / file.height,
    size: file.size,
    size_formatted: formatSize(file.size),
    mime: file.mime,
    extension: file.extension,
    bits: file.bits,
    channels: file.channels,
    url: objectUrl(publicUrl, file.key),
  };
}
