// A server in a child process with a small heap (the test starts it with --max-old-space-size and --expose-gc):
// an engine whose run events feed a RunHistory, as the CLI and the extension wire them, running the code of one
// scenario of test/sandbox/limits.test.ts. It prints one JSON line per run and exits 0; a server that runs out
// of memory dies instead, which is what the test looks for.
//
//   node --import tsx --max-old-space-size=256 --expose-gc test/support/limitsChild.ts <scenario>
import { createEngine } from '../../src/engine/index';
import { RunHistory } from '../../src/engine/history';
import type { BackendKind, RunResult } from '../../src/engine/types';
import { testStorageDir } from './mcp';
import { sandboxUnderTest } from './sandboxUnderTest';

/** Python that raises displays.py's own limits, as any code in a run may. */
const RAISE_LIMITS =
  'import _code_mode_displays as d\nfor name in ("MAX_DATA_BYTES", "MAX_DATA_CHARS", "MAX_PER_RUN"):\n    setattr(d, name, 10**12)\n';

/** PNG bytes whose base64 is exactly 5 MiB, the largest display the documented limit allows. */
const MAX_SIZE_PNG = 'png = b"\\x89PNG\\r\\n\\x1a\\n" + bytes(3932152)\n';

interface Scenario {
  backend: BackendKind;
  runs: string[];
}

const SCENARIOS: Record<string, Scenario> = {
  // 6 displays of 30 MB (text and images), then a flood of 60 displays of 4 MB, then a plain run: 420 MB in all.
  'pyodide-displays': {
    backend: 'pyodide',
    runs: [
      `${RAISE_LIMITS}text = "x" * (30 * 10**6)\nimage = b"\\x89PNG\\r\\n\\x1a\\n" + bytes(22 * 10**6)\nfor i in range(3):\n    display(text)\n    display(image)\ndel text, image\nprint("sent")`,
      `${RAISE_LIMITS}chunk = "z" * (4 * 10**6)\nfor i in range(60):\n    display(chunk)\nprint("flooded")`,
      'print("still here")',
    ],
  },
  // Runs of 20 displays of 5 MiB each, within every documented limit: 1 GiB in all. The workspace-Python backend
  // sends them fastest; what the server keeps of them does not depend on the backend.
  history: {
    backend: 'python',
    runs: Array.from({ length: 10 }, () => `${MAX_SIZE_PNG}for i in range(20):\n    display(png)\nprint("shown")`),
  },
};

/** Heap in use after a full collection, once the current turn (which still holds the result) is over. */
async function settledHeap(): Promise<number> {
  await new Promise((resolve) => setImmediate(resolve));
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

function summary(result: RunResult): Record<string, unknown> {
  return {
    success: result.success,
    stdout: result.stdout,
    diagnostics: result.diagnostics,
    session_reset: result.session_reset,
    displays: (result.displays ?? []).map((d) => ({
      mime: d.mime,
      bytes: Buffer.byteLength(d.data),
      head: d.data.slice(0, 40),
      tail: d.data.slice(-120),
    })),
  };
}

async function main(): Promise<void> {
  const scenario = process.argv[2] ?? '';
  const { backend, runs } = SCENARIOS[scenario] ?? {};
  if (!backend || !runs) throw new Error(`no scenario ${scenario}`);
  // The sandbox under test reaches this child through the environment it inherits (CODE_MODE_TEST_SANDBOX).
  const engine = createEngine({ storageDir: testStorageDir, pyodide: { sandbox: sandboxUnderTest } });
  const history = new RunHistory();
  engine.onRunEvent((event) => history.handle(event));
  try {
    for (const code of runs) {
      // As text at once: slices of a display's data would keep all of it alive.
      const described = JSON.stringify(
        summary(await engine.run({ code, backend, session: `limits-${scenario}`, timeoutS: 0 })),
      );
      const line = {
        ...(JSON.parse(described) as object),
        // With the run's result let go of: what the server holds between runs.
        heapUsed: await settledHeap(),
        history: {
          retainedBytes: (history as { retainedBytes?: number }).retainedBytes,
          runs: history.all().map((r) => ({
            displays: r.displays.length,
            dropped: (r as { displaysDropped?: unknown }).displaysDropped,
          })),
        },
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    }
  } finally {
    await engine.dispose();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
