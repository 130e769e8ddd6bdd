import { escapeHtml } from './html';

/** One code a viewer page offers to copy. */
export interface EmbedCode {
  /** Stable and unique on a page: the id of its field. */
  id: string;
  /** What it is, as the field's label says it. */
  label: string;
  code: string;
}

/** What the codes are made of: an image's title and links (the server's `ImageView`, the upload page's answer). */
export interface EmbeddedImage {
  title: string;
  viewerUrl: string;
  original: { url: string };
  medium: { url: string };
  thumb: { url: string };
}

export interface EmbedGroup {
  title: string;
  codes: EmbedCode[];
}

/** What a code is called wherever a page names it beside its group ("HTML: medium", "Links: viewer"). */
export function codeName(group: EmbedGroup, code: EmbedCode): string {
  return `${group.title}: ${code.label}`;
}

const SIZES = [
  { key: 'full', label: 'full size' },
  { key: 'medium', label: 'medium' },
  { key: 'thumb', label: 'thumbnail' },
] as const;

/**
 * A title inside Markdown's `![...]`, as plain text: every ASCII punctuation character is backslash-escaped (CommonMark
 * allows it before any of them), so no bracket, HTML tag, entity, emphasis or autolink of the title is read as
 * Markdown; line breaks are flattened. The URLs are the service's own and hold no Markdown characters.
 */
export function markdownAltText(title: string): string {
  return title.replace(/[\r\n]+/g, ' ').replace(/[!-/:-@[-`{-~]/g, (char) => `\\${char}`);
}

/**
 * The codes people paste elsewhere: the viewer link, the direct links, and HTML, BBCode and Markdown for each size,
 * every image linking to the viewer. Each is plain text here; the page escapes it for its field.
 */
export function embedCodes(image: EmbeddedImage): EmbedGroup[] {
  const url = { full: image.original.url, medium: image.medium.url, thumb: image.thumb.url };
  const viewer = image.viewerUrl;
  const alt = escapeHtml(image.title);
  const each = (prefix: string, make: (imageUrl: string) => string): EmbedCode[] =>
    SIZES.map(({ key, label }) => ({ id: `${prefix}-${key}`, label, code: make(url[key]) }));
  return [
    {
      title: 'Links',
      codes: [
        { id: 'link-viewer', label: 'viewer', code: viewer },
        ...SIZES.map(({ key, label }) => ({ id: `link-${key}`, label: `direct, ${label}`, code: url[key] })),
      ],
    },
    { title: 'HTML', codes: each('html', (src) => `<a href="${viewer}"><img src="${src}" alt="${alt}"></a>`) },
    { title: 'BBCode', codes: each('bbcode', (src) => `[url=${viewer}][img]${src}[/img][/url]`) },
    { title: 'Markdown', codes: each('markdown', (src) => `[![${markdownAltText(image.title)}](${src})](${viewer})`) },
  ];
}
