// Styled terminal lines (engine/terminalText.ts) as DOM: text nodes for plain stretches, spans with classes for the
// 16 ANSI colours (VS Code's terminal theme colours, media/results.css) and for bold, italic and the like. A 256-
// colour or RGB colour is set through the style property (CSSOM, which the page's CSP allows; no style attribute).
import type { StyledLine, TerminalColor, TextStyle } from '../engine/browser';
import { el } from './dom';

export function renderLine(line: StyledLine): Node[] {
  return line.map(({ text, style }) =>
    Object.keys(style).length ? styledSpan(text, style) : document.createTextNode(text),
  );
}

function styledSpan(text: string, style: TextStyle): HTMLSpanElement {
  const [fg, bg] = style.inverse ? [style.bg, style.fg] : [style.fg, style.bg];
  const classes = ['ansi'];
  if (style.inverse) classes.push('ansi-inverse');
  for (const flag of ['bold', 'dim', 'italic', 'underline', 'strike'] as const)
    if (style[flag]) classes.push(`ansi-${flag}`);
  const span = el('span', { text });
  setColor(span, 'fg', fg, classes);
  setColor(span, 'bg', bg, classes);
  span.className = classes.join(' ');
  return span;
}

function setColor(
  span: HTMLSpanElement,
  which: 'fg' | 'bg',
  color: TerminalColor | undefined,
  classes: string[],
): void {
  if (color === undefined) return;
  if (typeof color === 'number') classes.push(`ansi-${which}-${color}`);
  else if (which === 'fg') span.style.color = color;
  else span.style.backgroundColor = color;
}
