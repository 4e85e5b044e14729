// How the report writes its figures: Markdown tables, numbers to a sensible precision, ratios and changes.
import type { BackendKind } from '../src/engine/types';

export const BACKEND_NAMES: Record<BackendKind, string> = {
  pyodide: 'Pyodide',
  python: 'workspace Python',
  jupyter: 'Jupyter kernel',
};

export const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(3));
export const times = (n: number) => `${n.toFixed(1)}×`;
export const percent = (ratio: number) => {
  const change = Math.round((ratio - 1) * 100);
  return `${change > 0 ? '+' : change < 0 ? '−' : '±'}${Math.abs(change)} %`;
};

export function table(header: string[], rows: string[][]): void {
  console.log(`| ${header.join(' | ')} |`);
  console.log(`|${header.map(() => '---').join('|')}|`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}
