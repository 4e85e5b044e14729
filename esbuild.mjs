// One build for every entry point, as vscode-eslint and the esbuild sample do.
//   node esbuild.mjs               development build (sourcemaps)
//   node esbuild.mjs --production  minified, for packaging
//   node esbuild.mjs --watch
//   node esbuild.mjs --if-missing  build only when dist/ is absent (npm start on a fresh clone)
//   node esbuild.mjs --tests       also bundle the real-VS-Code suite (test/vscode) to out/test/vscode
// Every build but --watch then makes the Pyodide memory snapshots shipped in dist/pyodide-snapshot/ (with the built
// host and worker: scripts/pyodide-snapshot.ts), unless dist/ holds them already for this worker and Pyodide build.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { englishZodOnly, runCardHtml } from './scripts/run-card-html.mjs';

const args = new Set(process.argv.slice(2));
const production = args.has('--production');
const root = path.dirname(new URL(import.meta.url).pathname);
const dist = path.join(root, 'dist');

if (args.has('--if-missing') && fs.existsSync(path.join(dist, 'cli.js'))) process.exit(0);

/** Node-side bundles: [entry, output file]. */
const nodeEntries = [
  ['src/extension.ts', 'extension.js'],
  ['src/mcp/cli.ts', 'cli.js'],
  // .cjs: Deno, which runs them where bubblewrap cannot (sandbox/deno.ts), takes a plain .js file for an ES module.
  ['src/engine/backends/pyodide/host.ts', 'pyodide-host.cjs'],
  ['src/engine/backends/pyodide/worker.ts', 'pyodide-worker.cjs'],
  // The Jupyter client library, loaded only when the jupyter backend is first used.
  ['src/engine/backends/jupyter/kernelClient.ts', 'jupyter-client.js'],
  // The MCP client, loaded only when code mode first connects to another server.
  ['src/engine/codemode/mcpClient.ts', 'mcp-client.js'],
];

/** Files copied verbatim next to the bundles: [from, to] relative to the root and dist/. */
const pyodideFiles = [
  'pyodide.asm.js',
  'pyodide.asm.wasm',
  'python_stdlib.zip',
  'pyodide-lock.json',
  'pyodide.js',
  'package.json',
];
const codiconFiles = [
  ['dist/codicon.css', 'codicon.css'],
  ['dist/codicon.ttf', 'codicon.ttf'],
  ['LICENSE', 'LICENSE'],
];
const copies = [
  // One dist/python/ folder: the driver loads its parts and the runtime every backend shares (backends/runtime/)
  // from beside it.
  ['src/engine/backends/python/driver.py', 'python/driver.py'],
  ['src/engine/backends/python/interrupts.py', 'python/interrupts.py'],
  ['src/engine/backends/python/frames.py', 'python/frames.py'],
  ['src/engine/backends/python/run_output.py', 'python/run_output.py'],
  ['src/engine/backends/python/host_calls.py', 'python/host_calls.py'],
  ['src/engine/backends/runtime/cell.py', 'python/cell.py'],
  ['src/engine/backends/runtime/displays.py', 'python/displays.py'],
  ['src/engine/backends/runtime/code_mode.py', 'python/code_mode.py'],
  ['src/engine/backends/python/processes.py', 'python/processes.py'],
  ['src/engine/backends/runtime/user_input.py', 'python/user_input.py'],
  ['src/engine/backends/jupyter/kernel_support.py', 'python/kernel_support.py'],
  ...pyodideFiles.map((f) => [`node_modules/pyodide/${f}`, `pyodide/${f}`]),
  // The results webview's icons: VS Code's codicon font and its stylesheet (the font's licence goes with it).
  ...codiconFiles.map(([from, to]) => [`node_modules/@vscode/codicons/${from}`, `codicons/${to}`]),
];

function copyAssets() {
  for (const [from, to] of copies) {
    const target = path.join(dist, to);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(path.join(root, from), target);
  }
}

const common = {
  bundle: true,
  minify: production,
  sourcemap: !production,
  logLevel: 'warning',
  absWorkingDir: root,
  // Python sources shared with the Pyodide worker are embedded as text.
  loader: { '.py': 'text' },
};

const contexts = [
  ...nodeEntries.map(([entry, out]) =>
    esbuild.context({
      ...common,
      entryPoints: [entry],
      outfile: path.join(dist, out),
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      // Pyodide is loaded at run time from dist/pyodide, never bundled; vscode is provided by the host.
      external: ['vscode', 'pyodide', './pyodide/pyodide.js'],
      // zod probes `typeof navigator`, which newer Node hosts flag with a migration error: there is none in Node.
      define: { navigator: 'undefined' },
      banner: out === 'cli.js' ? { js: '#!/usr/bin/env node' } : undefined,
      // The Jupyter client narrates its connection on console.log/debug (stdout in the CLI, whose stdout is MCP);
      // the backend logs what matters itself. Its warnings and errors still reach stderr.
      pure: out === 'jupyter-client.js' ? ['console.log', 'console.debug'] : [],
      // `pure` calls are dropped only where syntax is minified.
      minifySyntax: production || out === 'jupyter-client.js',
    }),
  ),
  // The results webview's script runs in the webview (a browser), loaded by a <script nonce> tag.
  esbuild.context({
    ...common,
    entryPoints: ['src/webview/main.ts'],
    outfile: path.join(dist, 'webview.js'),
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
  }),
  // run_python's result as an MCP App: the same card, written into one document, dist/run-card.html. Always
  // minified and without a source map: the whole document goes to the host in one resources/read.
  esbuild.context({
    ...common,
    entryPoints: ['src/app/runCard.mts'],
    // Names the .js and .css outputs only: nothing is written there.
    outdir: path.join(root, 'out', 'build', 'run-card'),
    write: false,
    minify: true,
    sourcemap: false,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    plugins: [englishZodOnly, runCardHtml(path.join(dist, 'run-card.html'))],
  }),
];

// Real-VS-Code integration suite: the mocha run() entry and every suite/*.test.ts, loaded by the
// extension host from out/test/vscode (scripts/vscode-host/run.mjs). vscode and mocha stay external.
if (args.has('--tests')) {
  const testOut = path.join(root, 'out', 'test', 'vscode');
  const suiteDir = path.join(root, 'test', 'vscode', 'suite');
  const suites = fs.existsSync(suiteDir)
    ? fs
        .readdirSync(suiteDir)
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => `test/vscode/suite/${f}`)
    : [];
  if (!args.has('--watch')) fs.rmSync(testOut, { recursive: true, force: true }); // no stale suites
  contexts.push(
    esbuild.context({
      ...common,
      entryPoints: ['test/vscode/index.ts', ...suites],
      outbase: 'test/vscode',
      outdir: testOut,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['vscode', 'mocha'],
    }),
  );
}

// Run from out/build/ once the bundles and Pyodide's files are in dist/; never shipped.
const snapshotMaker = path.join(root, 'out', 'build', 'pyodide-snapshot.cjs');
if (!args.has('--watch')) {
  contexts.push(
    esbuild.context({
      ...common,
      minify: false,
      entryPoints: ['scripts/pyodide-snapshot.ts'],
      outfile: snapshotMaker,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      external: ['pyodide'],
      define: { navigator: 'undefined' },
    }),
  );
}

const built = await Promise.all(contexts);
if (args.has('--watch')) {
  copyAssets();
  await Promise.all(built.map((c) => c.watch()));
} else {
  await Promise.all(built.map((c) => c.rebuild()));
  await Promise.all(built.map((c) => c.dispose()));
  copyAssets();
  if (fs.existsSync(path.join(dist, 'cli.js'))) fs.chmodSync(path.join(dist, 'cli.js'), 0o755);
  const made = spawnSync(process.execPath, [snapshotMaker], { cwd: root, stdio: 'inherit' });
  if (made.status !== 0) process.exit(made.status ?? 1);
}
