#!/usr/bin/env node
// What the engine's own tests need from the operating system, installed idempotently:
//   - bubblewrap (Linux): the Pyodide sandbox; the escape suite must run, never skip, on Linux.
// Usage: node scripts/system-deps.mjs
import { installDebianPackages, MissingPackagesError, onPath } from './debian.mjs';

const say = (msg) => process.stdout.write(`[system-deps] ${msg}\n`);
const missing = [];
if (process.platform === 'linux' && !onPath('bwrap')) missing.push('bubblewrap');
try {
  installDebianPackages(missing, say, ' (bubblewrap is the Pyodide sandbox on Linux)');
  say(missing.length ? `installed ${missing.join(', ')}` : 'up to date');
} catch (e) {
  process.stderr.write(`[system-deps] FAILED: ${e instanceof MissingPackagesError ? e.message : e?.stack || e}\n`);
  process.exit(1);
}
