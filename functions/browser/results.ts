import { embedCodes, type EmbeddedImage } from '../http/embed-codes';
import type { UploadedImage } from './api-client';
import { make } from './dom';

function copyButton(field: HTMLInputElement, label: string): HTMLButtonElement {
  const button = make('button', { type: 'button', 'aria-label': `Copy ${label}` }, 'Copy');
  button.addEventListener('click', () => {
    const copied = (): void => {
      button.textContent = 'Copied';
      setTimeout(() => (button.textContent = 'Copy'), 1500);
    };
    const select = (): void => {
      field.focus();
      field.select();
    };
    // no clipboard on a page that is not a secure context (plain http from another machine): the text is selected
    if (navigator.clipboard === undefined) select();
    else navigator.clipboard.writeText(field.value).then(copied, select);
  });
  return button;
}

function codeLine(id: string, label: string, value: string, copyLabel = label): HTMLDivElement {
  const line = make('div', { class: 'code' });
  const field = make('input', { type: 'text', id, readonly: '' });
  field.value = value;
  line.append(make('label', { for: id }, label), field, copyButton(field, copyLabel));
  return line;
}

/** What the embed codes are made of, from the API's answer. */
export function embeddedOf(image: UploadedImage): EmbeddedImage {
  return {
    title: image.title,
    viewerUrl: image.url_viewer,
    original: { url: image.url },
    medium: { url: image.medium.url },
    thumb: { url: image.thumb.url },
  };
}

/** An uploaded picture's row: its thumbnail, its links and its embed codes, each with a copy button. */
export function showResult(item: HTMLLIElement, rowId: number, image: UploadedImage): void {
  const result = make('div', { class: 'result' });
  const picture = make('a', { href: image.url_viewer, class: 'thumb' });
  picture.append(
    make('img', { src: image.thumb.url, alt: image.title, width: String(image.thumb.width), height: String(image.thumb.height) }),
  );
  const prefix = `r${rowId}`;
  const links = make('div', { class: 'codes' });
  const of = ` of ${image.title}`;
  links.append(
    codeLine(`${prefix}-direct`, 'Direct link', image.url, `Direct link${of}`),
    codeLine(`${prefix}-viewer`, 'Viewer page', image.url_viewer, `Viewer page${of}`),
    codeLine(`${prefix}-delete`, 'Delete link', image.delete_url, `Delete link${of}`),
  );
  const more = make('details', { class: 'embed' });
  more.append(make('summary', {}, 'Embed codes'));
  for (const group of embedCodes(embeddedOf(image))) {
    if (group.title === 'Links') continue;
    const codes = make('div', { class: 'codes' });
    for (const code of group.codes)
      codes.append(codeLine(`${prefix}-${code.id}`, code.label, code.code, `${group.title}, ${code.label}${of}`));
    more.append(make('h3', {}, group.title), codes);
  }
  result.append(picture, links, more);
  item.append(result);
}
