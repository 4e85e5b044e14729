// Python writing files into a writable workspace folder through the Pyodide sandbox, each target in turn: under
// bubblewrap every write is a request to the server (src/engine/sandbox/writeProxy.ts), so this is what that costs
// against a checkout that wrote through a writable mount.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WORKSPACE_WRITE_RUNS } from './options';
import { median, timed } from './statistics';
import type { Target } from './targets';

export interface WriteFigures {
  /** 8 MiB written in 1,024 writes of 8 KiB (Python's buffer size), one file. */
  bigFileMs: number[];
  /** 100 files of 100 bytes, each created, written and closed. */
  smallFilesMs: number[];
  sandbox: string;
}

const BIG_FILE = 'with open(f"{d}/big.bin", "wb") as h:\n    for _ in range(1024): h.write(chunk)';
const SMALL_FILES = 'for i in range(100):\n    with open(f"{d}/{i}.txt", "w") as h: h.write("x" * 100)';

export async function measureWorkspaceWrites(targets: Target[]): Promise<Map<Target, WriteFigures>> {
  const figures = new Map<Target, WriteFigures>();
  const engines = targets.map((target) => {
    // Below the top level: a workspace folder's top level stays read-only with workspace write on.
    const out = path.join(target.workspace, 'writes');
    fs.mkdirSync(out, { recursive: true });
    figures.set(target, { bigFileMs: [], smallFilesMs: [], sandbox: '' });
    const engine = target.engines.createEngine({
      storageDir: target.storage,
      workspaceRoots: [target.workspace],
      pyodide: { workspaceWritable: true },
    });
    return { target, engine, out };
  });
  try {
    for (const { target, engine, out } of engines) {
      const setUp = await engine.run({ code: `d = ${JSON.stringify(out)}\nchunk = b"x" * 8192`, backend: 'pyodide' });
      if (!setUp.success) throw new Error(`workspace writes at ${target.label}: ${JSON.stringify(setUp.diagnostics)}`);
      figures.get(target)!.sandbox = engine.sandbox('pyodide')?.mechanism ?? 'unknown';
    }
    const once = async (engine: (typeof engines)[number]['engine'], code: string) => {
      const result = await engine.run({ code, backend: 'pyodide' });
      if (!result.success) throw new Error(`workspace writes: ${JSON.stringify(result.diagnostics)}`);
    };
    for (let round = 0; round < WORKSPACE_WRITE_RUNS + 2; round++)
      for (let k = 0; k < engines.length; k++) {
        const { target, engine, out } = engines[(round + k) % engines.length];
        const big = await timed(() => once(engine, BIG_FILE));
        const small = await timed(() => once(engine, SMALL_FILES));
        // The first two rounds warm up.
        if (round < 2) continue;
        figures.get(target)!.bigFileMs.push(big);
        figures.get(target)!.smallFilesMs.push(small);
        if (fs.statSync(path.join(out, 'big.bin')).size !== 8 * 1024 * 1024) throw new Error('8 MiB were not written');
      }
  } finally {
    await Promise.all(engines.map(({ engine }) => engine.dispose()));
  }
  return figures;
}

export function writeMedians(figures: WriteFigures): { bigFileMs: number; smallFilesMs: number } {
  return { bigFileMs: median(figures.bigFileMs), smallFilesMs: median(figures.smallFilesMs) };
}
