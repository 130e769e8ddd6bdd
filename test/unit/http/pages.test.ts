import fc from 'fast-check';
import { HtmlRenderer, Parser } from 'commonmark';
import { createHash } from 'node:crypto';
import type { ImageView } from '../../../functions/core/lifecycle/image-view';
import { embedCodes, markdownAltText } from '../../../functions/http/embed-codes';
import { appsPage } from '../../../functions/http/apps-page';
import { PAGE_STYLE_SOURCE, siteOf } from '../../../functions/http/page-shell';
import { deleteConfirmPage, notFoundPage } from '../../../functions/http/pages';
import { PAGE_SCRIPT_SOURCE, viewerPage as viewerOf } from '../../../functions/http/viewer-page';
import { pageSecurityHeaders } from '../../../functions/http/responses';

const HOSTILE = `"><script>alert(1)</script><img src=x onerror=alert(2)> ' [x](javascript:alert(3)) & \\] ]]`;
const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

const file = (name: string, width: number, mime = 'image/jpeg') => ({
  url: `https://img.example/images/2026/11/23/${name}`,
  width,
  height: Math.round(width * 0.75),
  size: width * 100,
  mime,
});

function image(overrides: Partial<ImageView> = {}): ImageView {
  return {
    idEncoded: 'Ab3',
    viewerUrl: 'https://img.example/image/Ab3',
    title: 'Sunset over the bay',
    description: null,
    nsfw: false,
    animated: false,
    createdAtMs: NOW - 3 * 3_600_000,
    expiresAtMs: null,
    views: 1,
    original: file('sunset.jpg', 4000),
    medium: file('sunset.md.jpg', 500),
    thumb: file('sunset.th.jpg', 160),
    ...overrides,
  };
}

/** Every inline `<script>` and `<style>` text of a page. */
function inline(html: string, tag: 'script' | 'style'): string[] {
  return [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((match) => match[1] ?? '');
}

/**
 * The attribute names of every tag of a page (the raw `<...>` in it: escaped text has none, and escaped values hold no
 * raw quote, so each quoted value ends where it should).
 */
const attributeNames = (html: string): string[] =>
  [...html.matchAll(/<[a-z][a-z0-9]*((?:\s+[a-z:-]+(?:="[^"]*")?)*)\s*>/gi)].flatMap((tag) =>
    [...(tag[1] ?? '').matchAll(/\s+([a-z:-]+)(?:="[^"]*")?/gi)].map((attribute) => (attribute[1] ?? '').toLowerCase()),
  );
const hasHandler = (html: string): boolean => attributeNames(html).some((name) => name.startsWith('on'));

const SITE = siteOf({ publicUrl: 'https://img.example' });
const viewerPage = (view: ImageView, timeZone: string, nowMs: number): string => viewerOf(SITE, view, timeZone, nowMs);

const sha = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

describe('the viewer page', () => {
  const html = viewerPage(image(), 'UTC', NOW);

  it('shows the picture first, from the rendition the window needs, linking to the original, with its facts', () => {
    expect(html).toContain(
      '<a href="https://img.example/images/2026/11/23/sunset.jpg"><picture><source media="(max-width: 700px)" srcset="https://img.example/images/2026/11/23/sunset.md.jpg"><img src="https://img.example/images/2026/11/23/sunset.md.jpg" srcset="https://img.example/images/2026/11/23/sunset.md.jpg 500w, https://img.example/images/2026/11/23/sunset.jpg 4000w" sizes="min(1068px, calc(100vw - 32px), calc(80vh * 1.3333), 4000px)" alt="Sunset over the bay" width="1068" height="801"></picture></a>',
    );
    expect(html.indexOf('<div class="picture">')).toBeLessThan(html.indexOf('<h1>'));
    // a picture no wider than its medium: the one file, no choice
    const small = viewerPage(image({ medium: file('sunset.jpg', 400), original: file('sunset.jpg', 400) }), 'UTC', NOW);
    expect(small).toContain('<img src="https://img.example/images/2026/11/23/sunset.jpg" alt="Sunset over the bay" width="400"');
    expect(html).toContain(
      '<a class="button primary" id="download" href="https://img.example/images/2026/11/23/sunset.jpg" download>Download</a>',
    );
    expect(html).toContain('<input type="hidden" id="viewer-link" value="https://img.example/image/Ab3">');
    expect(html).toContain('<button type="button" data-copy="viewer-link" hidden>Copy link</button>');
    expect(html).toContain('<dt>Dimensions</dt><dd>4000 × 3000</dd>');
    expect(html).toContain('<dt>Size</dt><dd>400 KB</dd>');
    expect(html).toContain('<dt>Format</dt><dd>JPEG</dd>');
    expect(html).toContain('<time datetime="2026-11-23T09:00:00.000Z" title="2026-11-23 09:00:00 UTC">3 hours ago</time>');
    expect(html).toContain('<dt>Views</dt><dd>1 view</dd>');
    expect(html).not.toContain('Expires');
  });

  it('says when an expiring image expires, relative, the exact date on hover', () => {
    const expiring = viewerPage(image({ expiresAtMs: NOW + 2 * 86_400_000 }), 'Europe/Paris', NOW);
    expect(expiring).toContain(
      '<dt>Expires</dt><dd><time datetime="2026-11-25T12:00:00.000Z" title="2026-11-25 13:00:00 Europe/Paris">in 2 days</time></dd>',
    );
  });

  it('carries link-preview tags: the medium rendition with its size and type, the title, the viewer URL', () => {
    for (const tag of [
      '<meta property="og:title" content="Sunset over the bay">',
      '<meta property="og:url" content="https://img.example/image/Ab3">',
      '<meta property="og:image" content="https://img.example/images/2026/11/23/sunset.md.jpg">',
      '<meta property="og:image:type" content="image/jpeg">',
      '<meta property="og:image:width" content="500">',
      '<meta property="og:image:height" content="375">',
      '<meta name="twitter:card" content="summary_large_image">',
    ])
      expect(html).toContain(tag);
  });

  it('blurs a sensitive image behind a control and gives previews no picture of it', () => {
    const sensitive = viewerPage(image({ nsfw: true }), 'UTC', NOW);
    expect(sensitive).toMatch(
      /<label class="sensitive"><input type="checkbox" aria-label="Show the sensitive image"><picture><source [^>]*><img /,
    );
    expect(sensitive).not.toContain('og:image');
    expect(sensitive).not.toContain('twitter:image');
    expect(sensitive).toContain('<meta name="twitter:card" content="summary">');
  });

  it('offers every embed code in one chooser feeding one field, and each in a field of its own until the script runs', () => {
    const groups = embedCodes(image());
    const ids = groups.flatMap((group) => group.codes.map((code) => code.id));
    expect(ids).toHaveLength(13);
    const noscript = html.slice(html.indexOf('<div id="code-list" class="codes">'), html.indexOf('</section>'));
    for (const group of groups)
      for (const code of group.codes) {
        expect(html).toContain(
          `<option value="${code.id}" data-code="${code.code.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;')}">`,
        );
        expect(noscript).toContain(`<label for="${code.id}">`);
        expect(noscript).toContain(`id="${code.id}" readonly value="`);
      }
    expect(html.match(/<optgroup /g)).toHaveLength(groups.length);
    // one field and one copy button, the viewer link in it until another is chosen
    expect(html).toContain(
      '<input type="text" id="code" readonly aria-label="The link or code chosen" value="https://img.example/image/Ab3">',
    );
    expect(html.match(/data-copy="/g)).toHaveLength(2);
    const codes = Object.fromEntries(embedCodes(image()).flatMap((group) => group.codes.map((code) => [code.id, code.code])));
    expect(codes['html-medium']).toBe(
      '<a href="https://img.example/image/Ab3"><img src="https://img.example/images/2026/11/23/sunset.md.jpg" alt="Sunset over the bay"></a>',
    );
    expect(codes['bbcode-thumb']).toBe(
      '[url=https://img.example/image/Ab3][img]https://img.example/images/2026/11/23/sunset.th.jpg[/img][/url]',
    );
    expect(codes['markdown-full']).toBe(
      '[![Sunset over the bay](https://img.example/images/2026/11/23/sunset.jpg)](https://img.example/image/Ab3)',
    );
  });

  it('runs only the style and the script its CSP names by hash, and no inline handler', () => {
    const csp = pageSecurityHeaders('https://img.example')['Content-Security-Policy'] ?? '';
    // no framing, for older browsers too
    expect(csp).toContain("frame-ancestors 'none'");
    expect(pageSecurityHeaders('https://img.example')['X-Frame-Options']).toBe('DENY');
    expect(inline(html, 'style').map(sha)).toEqual([PAGE_STYLE_SOURCE]);
    expect(inline(html, 'script').map(sha)).toEqual([PAGE_SCRIPT_SOURCE]);
    expect(csp).toContain(`style-src ${PAGE_STYLE_SOURCE};`);
    expect(csp).toContain(`script-src ${PAGE_SCRIPT_SOURCE};`);
    expect(csp).not.toContain('unsafe-inline');
    expect(hasHandler(html)).toBe(false);
    // the check reads every tag's attributes, and sees a handler where there is one
    expect(attributeNames(html)).toEqual(expect.arrayContaining(['data-copy', 'data-code', 'content', 'aria-label', 'readonly']));
    expect(hasHandler(`${html}<a href="#" onclick="x()">`)).toBe(true);
  });
});

describe('values from an upload, in every context', () => {
  const hostile = image({ title: HOSTILE, description: `${HOSTILE}\nsecond line` });
  const pages = {
    viewer: viewerPage(hostile, 'UTC', NOW),
    sensitive: viewerPage({ ...hostile, nsfw: true }, 'UTC', NOW),
    deletion: deleteConfirmPage(SITE, hostile),
  };

  it.each(Object.entries(pages))('the %s page holds no markup from them: no script, tag or handler of theirs', (_name, html) => {
    expect(
      inline(html, 'script')
        .map(sha)
        .every((hash) => hash === PAGE_SCRIPT_SOURCE),
    ).toBe(true);
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(hasHandler(html)).toBe(false);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('escapes them in text, attributes and meta tags alike', () => {
    const escaped =
      '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &#39; [x](javascript:alert(3)) &amp; \\] ]]';
    expect(pages.viewer).toContain(`<title>${escaped} · img.example</title>`);
    expect(pages.viewer).toContain(`<h1>${escaped}</h1>`);
    expect(pages.viewer).toContain(`alt="${escaped}"`);
    expect(pages.viewer).toContain(`<meta property="og:title" content="${escaped}">`);
    expect(pages.viewer).toContain(`<meta name="twitter:title" content="${escaped}">`);
    expect(pages.viewer).toContain(`<p class="description">${escaped}\nsecond line</p>`);
  });

  it('escapes them inside the embed codes for the code, and the code for its field', () => {
    const codes = Object.fromEntries(embedCodes(hostile).flatMap((group) => group.codes.map((code) => [code.id, code.code])));
    // the HTML code is itself safe to paste: the title cannot leave its alt attribute
    expect(codes['html-full']).toContain('alt="&quot;&gt;&lt;script&gt;');
    expect(codes['html-full']?.match(/"/g)).toHaveLength(6);
    // Markdown: the title cannot close the alt text, so the link cannot be replaced
    expect(codes['markdown-full']).toBe(
      `[![${markdownAltText(HOSTILE)}](https://img.example/images/2026/11/23/sunset.jpg)](https://img.example/image/Ab3)`,
    );
    expect(markdownAltText(HOSTILE)).not.toMatch(/(^|[^\\])[[\]]/);
    // and the field shows the code exactly: escaped once more for the value attribute
    expect(pages.viewer).toContain(`id="html-full" readonly value="&lt;a href=&quot;https://img.example/image/Ab3&quot;&gt;`);
    expect(pages.viewer).toContain('alt=&quot;&amp;quot;&amp;gt;&amp;lt;script&amp;gt;');
  });
});

describe('the Markdown codes, rendered by the CommonMark reference implementation (commonmark.js)', () => {
  const render = (markdown: string): string => new HtmlRenderer().render(new Parser().parse(markdown));
  const unescapeXml = (text: string): string =>
    text
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');

  /** The code of a title, rendered: it must be exactly one link around one image, the title its alt text. */
  function expectInert(title: string): void {
    const code = embedCodes(image({ title })).find((group) => group.title === 'Markdown')?.codes[0]?.code ?? '';
    const html = render(code);
    const match =
      /^<p><a href="https:\/\/img\.example\/image\/Ab3"><img src="https:\/\/img\.example\/images\/2026\/11\/23\/sunset\.jpg" alt="([^"]*)" \/><\/a><\/p>\n$/.exec(
        html,
      );
    expect([title, match === null ? html : 'one link, one image']).toEqual([title, 'one link, one image']);
    expect(unescapeXml(match?.[1] ?? '')).toBe(title.replace(/[\r\n]+/g, ' '));
  }

  it('keeps a title of HTML, entities, links and emphasis as plain alt text: no tag, no handler', () => {
    for (const title of [
      `<x a='"><img src=x onerror=alert(1)>'>`,
      HOSTILE,
      '<script>alert(1)</script>',
      '&lt;b&gt; &amp; &#60;',
      '](javascript:alert(1)) [x]: /y',
      '*a* _b_ `c` ~~d~~ **e**',
      '<https://evil.example> www.evil.example',
      '\\\\ \\] trailing \\',
      'line\r\nbreak\n\nparagraph',
    ])
      expectInert(title);
  });

  it('for any title (property)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (title) => expectInert(title)));
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), (title) => expectInert(title.replace(/\0/g, ''))));
  });
});

describe('the other pages', () => {
  it('the delete page shows what goes and asks for a POST; GET deletes nothing', () => {
    const html = deleteConfirmPage(SITE, image());
    expect(html).toContain('<img src="https://img.example/images/2026/11/23/sunset.th.jpg" alt="Sunset over the bay"');
    expect(html).toContain('<form method="post"><button type="submit" class="danger">Delete for good</button></form>');
  });

  it('the API and apps page says how to upload with curl, and offers the settings of each app as a file', () => {
    const html = appsPage(SITE, 'https://img.example');
    expect(html).toContain('curl -F &quot;source=@photo.jpg&quot; -F &quot;key=YOUR_KEY&quot;');
    for (const file of ['sharex.sxcu', 'picgo.json', 'flameshot.sh']) expect(html).toContain(`href="/apps/${file}" download>`);
    expect(html).toContain('<a href="/apps" aria-current="page">API and apps</a>');
  });

  it('every page carries the header: the site name (SITE_NAME, or the host) linking home, and the two pages', () => {
    for (const html of [notFoundPage(SITE), viewerPage(image(), 'UTC', NOW), appsPage(SITE, 'https://img.example')]) {
      expect(html).toContain(
        '<a class="brand" href="/"><img src="/upload-icon-192.png" alt="" width="28" height="28">img.example</a>',
      );
      expect(html).toContain('<link rel="icon" href="/upload-icon-192.png">');
      expect(html).toContain('<footer>');
    }
    const named = notFoundPage(siteOf({ publicUrl: 'https://img.example', siteName: 'Pix & <Co>' }));
    expect(named).toContain('height="28">Pix &amp; &lt;Co&gt;</a>');
    expect(named).toContain('<title>Not found · Pix &amp; &lt;Co&gt;</title>');
  });

  it('the not-found page says the image may have expired or been deleted', () => {
    expect(notFoundPage(SITE)).toContain('It may have expired or been deleted.');
  });
});
