// Pyodide's start, backend spawn → ready: on an empty cache with the shipped snapshot or with none, and from the
// cached snapshot; under each sandbox mechanism (bubblewrap, Deno) with its warm runs; and a spare host's memory.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../src/engine/engine';
import type { SandboxChoice } from '../src/engine/sandbox/index';
import type { Logger } from '../src/engine/types';
import { processTreeMemory, type TreeMemory } from './memory';
import { CODE, PYODIDE_COLD_RUNS, SNAPSHOT_STARTS, WARM_CALLS } from './options';
import { timed } from './statistics';
import type { Target } from './targets';

export interface PyodideStart {
  /** Backend spawn → ready with an empty cache, as a fresh install starts: from the snapshot shipped with the build. */
  firstMs: number[];
  /** Backend spawn → ready with an empty cache and no shipped snapshot (the snapshot is made on the way). */
  coldMs: number[];
  /** Backend spawn → ready with the snapshot cached, as a fresh server process starts it (new backend each time). */
  snapshotMs: number[];
  /** The host's own load time from the snapshot (its "ready in N ms" log line). */
  snapshotHostLoadMs: number[];
  sandbox: string;
}

/** Where a start is expected to come from: `first` is an empty cache's (the shipped snapshot, or cold at a checkout that ships none). */
type StartExpected = 'cold' | 'first' | 'snapshot' | 'either';

/**
 * Starts one Pyodide session with a new backend on `storage`, as a newly started server would, and stops it.
 * `shipped`: whether the build's snapshot may be used (checkouts before it ignore the option and have none).
 */
async function startPyodideOnce(
  target: Target,
  storage: string,
  expect: StartExpected,
  sandbox?: SandboxChoice,
  shipped = true,
): Promise<{ ms: number; hostLoadMs: number; sandbox: string }> {
  const lines: string[] = [];
  const log: Logger = { info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
  const scratchDir = path.join(storage, 'scratch');
  fs.mkdirSync(scratchDir, { recursive: true });
  // As the engine builds it (index.ts), with the defaults; createPyodideBackend's signature is the same across versions.
  const session = target.pyodide
    .createPyodideBackend({
      cacheDir: path.join(storage, 'pyodide-cache'),
      log,
      ...(sandbox ? { sandbox } : {}),
      ...(shipped ? {} : { shippedSnapshotDir: false }),
    })
    .create({
      session: 'bench',
      log,
      scratchDir,
      hostCall: async () => {
        throw new Error('no host calls in the bench');
      },
    });
  try {
    const ms = await timed(() => session.start());
    const ready = lines
      .map((line) => /ready in (\d+) ms, (from the cached snapshot|from the shipped snapshot|cold)/.exec(line))
      .find((m) => m);
    if (!ready) throw new Error(`no ready line from Pyodide: ${lines.join('\n')}`);
    const from = ready[2] === 'cold' ? 'cold' : ready[2] === 'from the cached snapshot' ? 'snapshot' : 'shipped';
    const expected = {
      cold: ['cold'],
      first: ['shipped', 'cold'],
      snapshot: ['snapshot'],
      either: ['cold', 'shipped', 'snapshot'],
    }[expect];
    if (!expected.includes(from)) throw new Error(`expected a ${expect} start, got: ${ready[0]}`);
    const sandbox =
      lines.map((line) => /\(sandbox: ([^)]+)\)/.exec(line)?.[1]).find((m) => m) ?? 'not reported (forked host)';
    return { ms, hostLoadMs: Number(ready[1]), sandbox };
  } finally {
    await session.dispose();
  }
}

/**
 * Empty-cache starts first, each kind in turn: with no snapshot at all (the first one in each target's own storage
 * makes the snapshot its servers use), and as a fresh install has it (the shipped snapshot); then snapshot starts.
 * Targets alternate.
 */
export async function measurePyodideStarts(targets: Target[]): Promise<Map<Target, PyodideStart>> {
  const starts = new Map<Target, PyodideStart>(
    targets.map((t) => [t, { firstMs: [], coldMs: [], snapshotMs: [], snapshotHostLoadMs: [], sandbox: '' }]),
  );
  for (let i = 0; i < PYODIDE_COLD_RUNS; i++) {
    for (const target of targets) {
      for (const kind of ['cold', 'first'] as const) {
        const storage =
          i === 0 && kind === 'cold' ? target.storage : fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-bench-cold-'));
        // An empty cache folder, not a missing one: a37915e's host (Node's permission model) could not save its
        // snapshot into a folder that did not exist when it started, which would leave every start cold.
        fs.mkdirSync(path.join(storage, 'pyodide-cache'), { recursive: true });
        try {
          const start = await startPyodideOnce(target, storage, kind, undefined, kind === 'first');
          starts.get(target)![kind === 'cold' ? 'coldMs' : 'firstMs'].push(start.ms);
          starts.get(target)!.sandbox = start.sandbox;
        } finally {
          if (storage !== target.storage) fs.rmSync(storage, { recursive: true, force: true });
        }
      }
    }
  }
  for (let i = 0; i < SNAPSHOT_STARTS; i++) {
    for (const target of targets) {
      const start = await startPyodideOnce(target, target.storage, 'snapshot');
      starts.get(target)!.snapshotMs.push(start.ms);
      starts.get(target)!.snapshotHostLoadMs.push(start.hostLoadMs);
    }
  }
  return starts;
}

// ---- the Pyodide sandbox mechanisms, measured in the same run --------------------------------------------

/** bubblewrap (Linux) and Deno's permission model (sandbox/deno.ts), each with its own snapshot in the cache. */
export const SANDBOX_CHOICES: SandboxChoice[] = ['bubblewrap', 'deno'];

export interface MechanismFigures {
  /** What the backend reported it ran under (a choice that cannot be had here falls back). */
  mechanism: string;
  snapshotMs: number[];
  snapshotHostLoadMs: number[];
  warm: number[];
}

/** Start from the snapshot and warm engine.run, for each mechanism, alternating between them. */
export async function measureSandboxMechanisms(target: Target): Promise<Map<SandboxChoice, MechanismFigures>> {
  const figures = new Map<SandboxChoice, MechanismFigures>(
    SANDBOX_CHOICES.map((choice) => [choice, { mechanism: '', snapshotMs: [], snapshotHostLoadMs: [], warm: [] }]),
  );
  // Makes each mechanism's snapshot if this storage has none yet (Deno keeps its own).
  for (const choice of SANDBOX_CHOICES)
    figures.get(choice)!.mechanism = (await startPyodideOnce(target, target.storage, 'either', choice)).sandbox;
  for (let i = 0; i < SNAPSHOT_STARTS; i++) {
    for (const choice of SANDBOX_CHOICES) {
      const start = await startPyodideOnce(target, target.storage, 'snapshot', choice);
      figures.get(choice)!.snapshotMs.push(start.ms);
      figures.get(choice)!.snapshotHostLoadMs.push(start.hostLoadMs);
    }
  }
  const engines = SANDBOX_CHOICES.map((choice) => ({
    choice,
    engine: target.engines.createEngine({
      storageDir: target.storage,
      workspaceRoots: [target.workspace],
      pyodide: { sandbox: choice },
    }),
  }));
  try {
    const once = async (engine: Engine) => {
      const result = await engine.run({ code: CODE, backend: 'pyodide' });
      if (result.stdout !== '2\n') throw new Error(`unexpected result ${JSON.stringify(result)}`);
    };
    for (let i = 0; i < 50; i++) for (const { engine } of engines) await once(engine);
    for (let round = 0; round < WARM_CALLS; round++) {
      for (let k = 0; k < engines.length; k++) {
        const { choice, engine } = engines[(round + k) % engines.length];
        figures.get(choice)!.warm.push(await timed(() => once(engine)));
      }
    }
  } finally {
    await Promise.all(engines.map(({ engine }) => engine.dispose()));
  }
  return figures;
}

// ---- the spare Pyodide host ------------------------------------------------------------------------------

/** The memory of a spare Pyodide host (restored from the snapshot, idle) at `target`; undefined where it keeps none. */
export async function measureSpare(target: Target): Promise<TreeMemory | undefined> {
  const engine = target.engines.createEngine({ storageDir: target.storage, workspaceRoots: [target.workspace] });
  try {
    if (!('keepSpare' in engine)) return undefined;
    engine.keepSpare('pyodide');
    const deadline = Date.now() + 300_000;
    while (engine.spareInfo()?.state !== 'ready') {
      if (Date.now() > deadline) throw new Error('the spare Pyodide host did not start');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return processTreeMemory(engine.spareInfo()!.pid!);
  } finally {
    await engine.dispose();
  }
}
