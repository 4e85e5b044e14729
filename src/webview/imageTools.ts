// What a person does with a figure: enlarge it (click it), save it (the host asks where: PNG, SVG as they came)
// and copy it (as PNG, which is what the clipboard takes).
import type { Display } from '../engine/browser';
import { button, el } from './dom';

/** The page's side of Save: the host shows a save dialog and writes the file. */
export type SaveImage = (display: Display) => void;

export function imageTools(display: Display, img: HTMLImageElement, save: SaveImage): HTMLElement {
  const title = display.title || display.mime;
  img.classList.add('enlargeable');
  img.title = 'Click to enlarge';
  img.addEventListener('click', () => enlarge(img, title));
  const enlargeButton = button('', 'zoom', 'icon-button enlarge', 'Enlarge');
  enlargeButton.addEventListener('click', () => enlarge(img, title));
  const saveButton = button(
    '',
    'save',
    'icon-button save',
    `Save as ${display.mime === 'image/svg+xml' ? 'SVG' : display.mime.slice('image/'.length).toUpperCase()}…`,
  );
  saveButton.addEventListener('click', () => save(display));
  const copyButton = button('', 'copy', 'icon-button copy-image', 'Copy image');
  copyButton.addEventListener('click', () => {
    copyImage(img).then(
      () => flash(copyButton, 'Copied'),
      () => flash(copyButton, 'Copy failed'),
    );
  });
  const tools = el('div', { className: 'image-tools' }, [enlargeButton, saveButton, copyButton]);
  img.addEventListener('error', () => tools.remove(), { once: true });
  return tools;
}

/** The figure over the whole view, fitted; a click on it shows it at its own size; Escape or a click beside it closes. */
function enlarge(img: HTMLImageElement, title: string): void {
  const big = el('img', { className: 'fit', attrs: { alt: img.alt } });
  big.src = img.src;
  big.addEventListener('click', () => big.classList.toggle('fit'));
  const close = button('', 'close', 'icon-button lightbox-close', 'Close (Escape)');
  const dialog = el('dialog', { className: 'lightbox', attrs: { 'aria-label': title } }, [
    el('div', { className: 'lightbox-head' }, [el('span', { text: title }), close]),
    el('div', { className: 'lightbox-body' }, [big]),
  ]);
  dialog.addEventListener('close', () => dialog.remove());
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('click', (event) => {
    if (event.target === dialog) dialog.close();
  });
  document.body.append(dialog);
  dialog.showModal();
}

/** The image as PNG on the clipboard, drawn from the decoded <img> (JPEG, GIF and SVG become PNG too). */
async function copyImage(img: HTMLImageElement): Promise<void> {
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  const context = canvas.getContext('2d');
  if (!context) throw new Error('no canvas');
  context.drawImage(img, 0, 0);
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/png'));
  if (!blob) throw new Error('the image could not be drawn');
  await navigator.clipboard.write([new ClipboardItem({ 'image/png': blob })]);
}

function flash(node: HTMLButtonElement, label: string): void {
  node.title = label;
  node.setAttribute('aria-label', label);
  node.classList.add('flashed');
  window.setTimeout(() => {
    node.classList.remove('flashed');
    node.title = 'Copy image';
    node.setAttribute('aria-label', 'Copy image');
  }, 1500);
}
