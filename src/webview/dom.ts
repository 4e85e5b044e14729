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

const SVG_NS = 'http://www.w3.org/2000/svg';

/** 16x16 stroke icons drawn with currentColor, so they follow the button's theme colour. */
const ICONS = {
  rerun: ['M13.5 8a5.5 5.5 0 1 1-1.61-3.89', 'M12.5 1.5v3h-3'],
  stop: ['M4.5 4.5h7v7h-7z'],
  copy: ['M5.5 5.5h8v8h-8z', 'M10.5 3.5v-1h-8v8h1'],
  clear: ['M3 4.5h10', 'M6 4.5v-2h4v2', 'M4.5 4.5l.7 9h5.6l.7-9'],
  close: ['M4 4l8 8', 'M12 4l-8 8'],
} as const;

export type IconName = keyof typeof ICONS;

export function icon(name: IconName): SVGSVGElement {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '14');
  svg.setAttribute('height', '14');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  for (const d of ICONS[name]) {
    const path = document.createElementNS(SVG_NS, 'path');
    path.setAttribute('d', d);
    path.setAttribute('fill', 'none');
    path.setAttribute('stroke', 'currentColor');
    path.setAttribute('stroke-width', '1.3');
    path.setAttribute('stroke-linecap', 'round');
    path.setAttribute('stroke-linejoin', 'round');
    svg.append(path);
  }
  return svg;
}

export function button(label: string, iconName: IconName | undefined, className: string, title?: string): HTMLButtonElement {
  const node = el('button', { className, attrs: { type: 'button', ...(title ? { title, 'aria-label': title } : {}) } });
  if (iconName) node.append(icon(iconName));
  if (label) node.append(el('span', { text: label }));
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
