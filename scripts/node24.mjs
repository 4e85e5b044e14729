#!/usr/bin/env node
// Runs node with the given arguments on the Node 24 the real-VS-Code test host installs (setup.mjs), for what
// behaves differently there than on Node 20 (e.g. V8's code cache of Pyodide's script, emscriptenScript.ts).
// Usage: node scripts/node24.mjs <node arguments>
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { hostPaths } from './vscode-host/common.mjs';

const node24 = hostPaths().nodeBin;
if (!fs.existsSync(node24)) {
  process.stderr.write(`[node24] no Node 24 at ${node24}: run node scripts/vscode-host/setup.mjs first\n`);
  process.exit(1);
}
const { status, signal } = spawnSync(node24, process.argv.slice(2), { stdio: 'inherit' });
process.exit(status ?? (signal ? 1 : 0));
