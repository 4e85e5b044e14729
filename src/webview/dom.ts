// DOM helpers for the results page. Everything run output or a tool returns reaches the page through
// textContent, attributes and properties set here, never through HTML parsing of the page itself.

export interface ElementProps {
  className?: string;
  text?: string;
  attrs?: Record<string, string>;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: ElementProps = {},
  children: (Node | string)[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (props.className) node.className = props.className;
  if (props.text !== undefined) node.textContent = props.text;
  for (const [name, value] of Object.entries(props.attrs ?? {})) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** Codicons (VS Code's icon font, dist/codicons/codicon.css) the page uses, by what they do. */
const ICONS = {
  rerun: 'debug-rerun',
  stop: 'debug-stop',
  copy: 'copy',
  clear: 'clear-all',
  close: 'close',
  newer: 'arrow-up',
  save: 'save',
  zoom: 'zoom-in',
} as const;

export type IconName = keyof typeof ICONS;

/** A codicon glyph; it takes the colour of the text around it, so it follows the button's theme colour. */
export function icon(name: IconName): HTMLSpanElement {
  return el('span', { className: `codicon codicon-${ICONS[name]}`, attrs: { 'aria-hidden': 'true' } });
}

export function button(
  label: string,
  iconName: IconName | undefined,
  className: string,
  title?: string,
): HTMLButtonElement {
  const node = el('button', { className, attrs: { type: 'button', ...(title ? { title, 'aria-label': title } : {}) } });
  if (iconName) node.append(icon(iconName));
  if (label) node.append(el('span', { className: 'label', text: label }));
  return node;
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.floor((ms % 60_000) / 1000);
  return `${minutes} m ${String(seconds).padStart(2, '0')} s`;
}

export function formatClock(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}
