/**
 * Every way a picture reaches the upload page but a share (`share-target.ts`): the file field, the URL field and its
 * button, a screenshot or a web address pasted, files or a link dropped anywhere on the page. Each hands its sources
 * to `add`, which lists them as rows.
 */
import type { Source } from './api-client';
import { isWebAddress } from './share-target';

export interface SourceFields {
  filesField: HTMLInputElement;
  urlField: HTMLInputElement;
  addUrl: HTMLButtonElement;
}

function files(list: FileList | null | undefined): Source[] {
  return [...(list ?? [])].map((file) => ({ kind: 'file', file }));
}

/** Listens for pictures; answers how to take what the URL field holds (the page's Upload does, first). */
export function gatherSources(
  { filesField, urlField, addUrl }: SourceFields,
  add: (sources: Source[]) => void,
  announce: (text: string) => void,
): { takeUrlField: () => boolean } {
  /** Lists the URL typed, if any; false, saying why, when it is not a web address. */
  function takeUrlField(): boolean {
    const url = urlField.value.trim();
    if (url === '') return true;
    if (!isWebAddress(url)) {
      announce('The URL must start with http:// or https://.');
      urlField.focus();
      return false;
    }
    add([{ kind: 'url', url }]);
    urlField.value = '';
    return true;
  }

  filesField.addEventListener('change', () => {
    add(files(filesField.files));
    filesField.value = '';
  });
  addUrl.addEventListener('click', () => void takeUrlField());
  urlField.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    takeUrlField();
  });

  fromThePage(add);
  return { takeUrlField };
}

/** A screenshot pasted anywhere on the page, a web address pasted outside a field; files or a link dropped anywhere. */
function fromThePage(add: (sources: Source[]) => void): void {
  document.addEventListener('paste', (event) => {
    const pasted = files(event.clipboardData?.files);
    if (pasted.length > 0) {
      event.preventDefault();
      add(pasted);
      return;
    }
    const target = event.target as HTMLElement | null;
    if (target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA')) return;
    const text = event.clipboardData?.getData('text/plain').trim() ?? '';
    if (isWebAddress(text)) add([{ kind: 'url', url: text }]);
  });

  document.addEventListener('dragover', (event) => {
    const types = event.dataTransfer?.types ?? [];
    if (!types.includes('Files') && !types.includes('text/uri-list')) return;
    event.preventDefault();
    if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
    document.body.classList.add('dragging');
  });
  document.addEventListener('dragleave', (event) => {
    if (event.relatedTarget === null) document.body.classList.remove('dragging');
  });
  document.addEventListener('drop', (event) => {
    document.body.classList.remove('dragging');
    const dropped = files(event.dataTransfer?.files);
    const link = event.dataTransfer?.getData('text/uri-list').split('\n')[0]?.trim() ?? '';
    if (dropped.length === 0 && !isWebAddress(link)) return;
    event.preventDefault();
    add(dropped.length > 0 ? dropped : [{ kind: 'url', url: link }]);
  });
}
