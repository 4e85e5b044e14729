// Renders what a run displayed besides text: images as data: URIs, HTML in a script-less sandboxed frame,
// text as text. Nothing a run produces is ever parsed as HTML in the page itself.
import type { Display } from '../engine/browser';
import { el } from './dom';
import { frameMarkup } from './frameMarkup';
import { imageTools, type SaveImage } from './imageTools';

const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/svg+xml']);
/** A displayed text file is shown up to this many characters, like run output. */
const MAX_DISPLAY_TEXT = 200_000;

/** The nonce of the page's own script: the inline `<style>` elements allowed inside HTML frames carry it. */
const pageNonce = document.currentScript instanceof HTMLScriptElement ? (document.currentScript.nonce ?? '') : '';

/** The HTML each frame shows, so frames can be restyled when the theme changes. */
const frameSources = new WeakMap<HTMLIFrameElement, string>();

/** `save`: images get Enlarge, Save and Copy. */
export function renderDisplay(display: Display, save?: SaveImage): HTMLElement {
  const figure = el('figure', { className: 'display', attrs: { 'data-mime': display.mime } });
  if (IMAGE_MIMES.has(display.mime)) {
    const img = renderImage(display);
    figure.append(img);
    if (save) figure.append(imageTools(display, img, save));
  } else if (display.mime === 'text/html') figure.append(renderHtml(display.data));
  else if (display.mime.startsWith('text/') || display.mime === 'application/json') figure.append(renderText(display));
  else
    figure.append(
      el('p', { className: 'note', text: `${display.mime} (${display.data.length} characters) cannot be shown here` }),
    );
  if (display.title) figure.append(el('figcaption', { text: display.title }));
  return figure;
}

function renderImage(display: Display): HTMLImageElement {
  const img = el('img', { attrs: { alt: display.title || display.mime, loading: 'lazy', decoding: 'async' } });
  // An <img> never runs script or loads what an SVG references, so SVG is shown this way and never inlined.
  const raw = display.data.trimStart();
  img.src =
    display.mime === 'image/svg+xml' && raw.startsWith('<')
      ? `data:image/svg+xml;charset=utf-8,${encodeURIComponent(display.data)}`
      : `data:${display.mime};base64,${display.data.replace(/\s+/g, '')}`;
  img.addEventListener(
    'error',
    () => img.replaceWith(el('p', { className: 'note', text: `${display.mime} image could not be decoded` })),
    {
      once: true,
    },
  );
  return img;
}

function renderText(display: Display): HTMLElement {
  let text = display.data;
  if (display.mime === 'application/json') {
    try {
      text = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not valid JSON after all: show it as it came.
    }
  }
  if (text.length > MAX_DISPLAY_TEXT)
    text = `${text.slice(0, MAX_DISPLAY_TEXT)}\n… [${text.length - MAX_DISPLAY_TEXT} characters not shown]`;
  return el('pre', { className: 'display-text', text });
}

function renderHtml(html: string): HTMLElement {
  // sandbox="" gives the frame an opaque origin with scripts, forms, popups and navigation of the page all off.
  const frame = el('iframe', {
    className: 'html-frame',
    attrs: { sandbox: '', title: 'HTML output', referrerpolicy: 'no-referrer' },
  });
  frameSources.set(frame, html);
  applyFrameDocument(frame);
  // The page cannot measure a frame it has no access to, so the height is estimated from the markup and the
  // person can drag the wrapper to resize it.
  const wrapper = el('div', { className: 'html-frame-wrapper' }, [frame]);
  wrapper.style.height = `${estimateHtmlHeight(html)}px`;
  return wrapper;
}

function estimateHtmlHeight(html: string): number {
  // Row and line heights of the frame stylesheet below (13px text, 4px cell padding) plus the body padding.
  const rows = html.match(/<tr[\s>]/gi)?.length ?? 0;
  const lines = html.match(/<(?:p|li|h[1-6]|br)[\s>/]/gi)?.length ?? 0;
  if (rows === 0 && lines === 0) return 120;
  return Math.min(480, Math.max(48, 20 + rows * 28 + lines * 22));
}

/** light or dark, from the class VS Code puts on the body; frames and their element must agree on it. */
function colorScheme(): 'light' | 'dark' {
  const classes = document.body.classList;
  if (classes.contains('vscode-light') || classes.contains('vscode-high-contrast-light')) return 'light';
  if (classes.contains('vscode-dark') || classes.contains('vscode-high-contrast')) return 'dark';
  return window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

function themeValue(style: CSSStyleDeclaration, fallback: string, ...names: string[]): string {
  for (const name of names) {
    // Theme values are colours and font lists; characters that could end the rule or the element are dropped.
    const value = style
      .getPropertyValue(name)
      .replace(/[<>{};\\]/g, '')
      .trim();
    if (value) return value;
  }
  return fallback;
}

/** The frame cannot see the page's CSS variables, so their current values are written into its stylesheet. */
function frameCss(scheme: 'light' | 'dark'): string {
  const s = getComputedStyle(document.body);
  const fg = themeValue(s, 'CanvasText', '--vscode-editor-foreground', '--vscode-foreground');
  // The frame sits on a card, so its sticky header row takes the card's background.
  const bg = themeValue(s, 'Canvas', '--vscode-editorWidget-background', '--vscode-editor-background');
  const border = themeValue(s, 'GrayText', '--vscode-panel-border', '--vscode-widget-border');
  const hover = themeValue(s, 'transparent', '--vscode-list-hoverBackground');
  const link = themeValue(s, 'LinkText', '--vscode-textLink-foreground');
  const font = themeValue(s, 'system-ui, sans-serif', '--vscode-font-family');
  const mono = themeValue(s, 'monospace', '--vscode-editor-font-family');
  const size = themeValue(s, '13px', '--vscode-font-size');
  return `:root{color-scheme:${scheme}}
body{margin:0;padding:6px 8px;color:${fg};background:transparent;font-family:${font};font-size:${size};line-height:1.4}
table{border-collapse:collapse;border:none;font-variant-numeric:tabular-nums;margin:0}
th,td{border:none;border-bottom:1px solid ${border};padding:4px 10px;text-align:right;white-space:nowrap}
thead th{position:sticky;top:0;background:${bg};border-bottom:1px solid ${fg};font-weight:600}
tbody th{font-weight:600;text-align:left}
tbody tr:nth-child(even){background:color-mix(in srgb,${fg} 5%,transparent)}
tbody tr:hover{background:${hover}}
a{color:${link}}
pre,code{font-family:${mono}}`;
}

function applyFrameDocument(frame: HTMLIFrameElement, scheme = colorScheme(), css = frameCss(scheme)): void {
  frame.dataset.scheme = scheme;
  const body = frameMarkup(frameSources.get(frame) ?? '', pageNonce);
  frame.srcdoc = `<!DOCTYPE html><html><head><meta charset="utf-8"><style nonce="${pageNonce}">${css}</style></head><body>${body}</body></html>`;
}

/** Rewrites every frame's document with the current theme's colours (VS Code switched themes). */
export function restyleFrames(): void {
  const scheme = colorScheme();
  const css = frameCss(scheme);
  document
    .querySelectorAll<HTMLIFrameElement>('iframe.html-frame')
    .forEach((frame) => applyFrameDocument(frame, scheme, css));
}
