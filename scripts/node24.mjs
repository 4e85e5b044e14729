#!/usr/bin/env node
// Runs node with the given arguments on the Node 24 the real-VS-Code test host installs (setup.mjs), for what
// behaves differently there than on Node 20 (e.g. V8's code cache of Pyodide's script, emscriptenScript.ts).
// Usage: node scripts/node24.mjs <node arguments>
import { spawnSync } from 'node:child_process';
import { installedNode24 } from './vscode-host/common.mjs';

const node24 = installedNode24('node24');
const { status, signal } = spawnSync(node24, process.argv.slice(2), { stdio: 'inherit' });
process.exit(status ?? (signal ? 1 : 0));
