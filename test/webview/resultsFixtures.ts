// What the results page is shown in its tests (test/webview/results-*.test.ts): runs and results as the engine
// reports them, a PNG built by hand (no image library), a pandas table and a matplotlib-style SVG chart.
import * as zlib from 'node:zlib';
import type { RunResult } from '../../src/engine/types';
import type { RunInfo } from '../../src/webview/protocol';
import { crc32 } from '../support/crc32';

// ---- a small valid PNG, built by hand so the test needs no image library --------------------------

function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An RGB gradient, `size` pixels square. */
export function gradientPng(size: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit depth, truecolour, deflate, adaptive filtering, no interlace
  const raw = Buffer.alloc(size * (1 + size * 3));
  for (let y = 0; y < size; y++) {
    const row = y * (1 + size * 3);
    raw[row] = 0; // filter: none
    for (let x = 0; x < size; x++) {
      const at = row + 1 + x * 3;
      raw[at] = Math.round((x / (size - 1)) * 255);
      raw[at + 1] = Math.round((y / (size - 1)) * 200);
      raw[at + 2] = 160;
    }
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    pngChunk('IHDR', header),
    pngChunk('IDAT', zlib.deflateSync(raw)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

// ---- fixtures ------------------------------------------------------------------------------------------

/** Runs start a few seconds apart, ending about now, so the clock column reads like a real session. */
let startedAt = Date.now() - 15 * 60_000;

/** The next run starts 7 s after `time`. */
export function startRunsAfter(time: number): void {
  startedAt = time;
}

export function runInfo(runId: string, code = 'print("hello")', extra: Partial<RunInfo> = {}): RunInfo {
  startedAt += 7_000;
  return { runId, session: 'default', backend: 'pyodide', code, origin: 'command', startedAt, ...extra };
}

export function result(runId: string, extra: Partial<RunResult> = {}): RunResult {
  return {
    success: true,
    stdout: '',
    stderr: '',
    duration_ms: 42,
    diagnostics: null,
    backend: 'pyodide',
    session: 'default',
    run_id: runId,
    ...extra,
  };
}

export const DATAFRAME_HTML = `<div>
<style scoped>.dataframe tbody tr th { vertical-align: top; }</style>
<table border="1" class="dataframe">
  <thead><tr style="text-align: right;"><th></th><th>city</th><th>temp_c</th><th>rain_mm</th><th>wind_kmh</th></tr></thead>
  <tbody>
    <tr><th>0</th><td>Lisbon</td><td>21.4</td><td>0.2</td><td>14</td></tr>
    <tr><th>1</th><td>Oslo</td><td>9.8</td><td>3.1</td><td>22</td></tr>
    <tr><th>2</th><td>Nairobi</td><td>24.0</td><td>1.7</td><td>11</td></tr>
    <tr><th>3</th><td>Osaka</td><td>17.3</td><td>5.4</td><td>9</td></tr>
  </tbody>
</table>
<script>document.body.dataset.scriptRan = 'yes';</script>
</div>`;

/** A small line chart, the way matplotlib's SVG backend would hand one over (raw markup, not base64). */
export const CHART_SVG = (() => {
  const xs = Array.from({ length: 40 }, (_, i) => i);
  const line = (f: (x: number) => number) => xs.map((x) => `${40 + x * 13},${150 - f(x) * 90}`).join(' ');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="580" height="190" viewBox="0 0 580 190" font-family="sans-serif" font-size="11">
<rect width="580" height="190" fill="#ffffff"/>
<g stroke="#e6e6e6">${[40, 70, 100, 130].map((y) => `<line x1="40" x2="560" y1="${y}" y2="${y}"/>`).join('')}</g>
<line x1="40" x2="560" y1="150" y2="150" stroke="#333"/><line x1="40" x2="40" y1="20" y2="150" stroke="#333"/>
<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="${line((x) => 0.5 + 0.45 * Math.sin(x / 4))}"/>
<polyline fill="none" stroke="#ff7f0e" stroke-width="2" points="${line((x) => 0.5 + 0.4 * Math.cos(x / 5) * Math.exp(-x / 60))}"/>
<text x="300" y="14" text-anchor="middle" font-size="12">Daily temperature anomaly</text>
<text x="300" y="175" text-anchor="middle" fill="#333">day</text>
<script>alert(1)</script>
</svg>`;
})();
