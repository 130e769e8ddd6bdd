/**
 * The API key: in its field, and in this browser's storage only when "Remember on this device" is ticked, until
 * "Forget". Where storage is refused (site data blocked), "Remember" is hidden and nothing is kept.
 */
const KEY_STORAGE = 'image-upload:api-key';

/** This browser's storage; none where it is refused. */
function storage(): Storage | undefined {
  try {
    return window.localStorage;
  } catch {
    return undefined;
  }
}

export interface KeyField {
  /** Keeps the key, or lets it go, as "Remember" says. */
  keep(): void;
}

export function keyField(
  field: HTMLInputElement,
  remember: HTMLInputElement,
  forget: HTMLButtonElement,
  announce: (text: string) => void,
): KeyField {
  const stored = storage()?.getItem(KEY_STORAGE) ?? null;
  if (!storage()) remember.closest('label')?.setAttribute('hidden', '');
  else if (stored !== null) {
    field.value = stored;
    remember.checked = true;
    forget.hidden = false;
  }
  forget.addEventListener('click', () => {
    storage()?.removeItem(KEY_STORAGE);
    field.value = '';
    remember.checked = false;
    forget.hidden = true;
    announce('The API key is forgotten on this device.');
    field.focus();
  });
  remember.addEventListener('change', () => {
    if (remember.checked) return;
    storage()?.removeItem(KEY_STORAGE);
    forget.hidden = true;
  });
  return {
    keep(): void {
      if (remember.checked && field.value !== '') {
        storage()?.setItem(KEY_STORAGE, field.value);
        forget.hidden = false;
      } else {
        storage()?.removeItem(KEY_STORAGE);
      }
    },
  };
}
