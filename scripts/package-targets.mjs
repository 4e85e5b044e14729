// Builds the extension's platform-specific packages, each carrying the Deno binary of its platform (the Pyodide
// sandbox where bubblewrap cannot run: src/engine/sandbox/deno.ts finds it in dist/deno/), and the universal
// package without one (Linux with bubblewrap, or Deno installed by other means).
//   node scripts/package-targets.mjs                      every target, then the universal package
//   node scripts/package-targets.mjs linux-x64 darwin-arm64   only these targets (no universal package)
//   node scripts/package-targets.mjs --universal          only the universal package
// Deno's binaries come from the npm registry (`npm pack @deno/<platform>@<version>`), cached in
// .package-cache/; the version is the one package.json pins as the optional dependency `deno`.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const denoVersion = manifest.optionalDependencies?.deno;
if (!denoVersion) throw new Error('package.json has no optional dependency "deno" to take the version from');

/** VS Code's target names and the `@deno/*` package each one carries. */
const TARGETS = {
  'linux-x64': 'linux-x64-glibc',
  'linux-arm64': 'linux-arm64-glibc',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64',
  'win32-arm64': 'win32-arm64',
};

const cache = path.join(root, '.package-cache', `deno-${denoVersion}`);
const bundledDir = path.join(root, 'dist', 'deno');

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (${result.error?.message ?? `exit ${result.status}`})`);
  return result;
}

/** The folder holding the unpacked `@deno/<platform>` package (its binary beside package.json). */
function denoPackage(platform) {
  const unpacked = path.join(cache, platform);
  if (fs.existsSync(path.join(unpacked, 'package.json'))) return unpacked;
  fs.mkdirSync(cache, { recursive: true });
  const packed = run(
    'npm',
    ['pack', `@deno/${platform}@${denoVersion}`, '--pack-destination', cache, '--json', '--silent'],
    { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' },
  );
  const tarball = path.join(cache, JSON.parse(packed.stdout)[0].filename);
  fs.mkdirSync(unpacked, { recursive: true });
  run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
  fs.rmSync(tarball);
  return unpacked;
}

/** Packages through scripts/package.mjs, which owns vsce's arguments (the README images' https base among them). */
function vsce(output, target) {
  run(process.execPath, [
    path.join(root, 'scripts', 'package.mjs'),
    '--out',
    output,
    ...(target ? ['--target', target] : []),
  ]);
  const size = fs.statSync(path.join(root, output)).size;
  console.log(`${output}: ${(size / 1024 / 1024).toFixed(1)} MB`);
}

function packageTarget(target) {
  const source = denoPackage(TARGETS[target]);
  const executable = target.startsWith('win32') ? 'deno.exe' : 'deno';
  fs.rmSync(bundledDir, { recursive: true, force: true });
  fs.mkdirSync(bundledDir, { recursive: true });
  fs.copyFileSync(path.join(source, executable), path.join(bundledDir, executable));
  fs.chmodSync(path.join(bundledDir, executable), 0o755);
  try {
    vsce(`code-mode-python-${target}.vsix`, target);
  } finally {
    fs.rmSync(bundledDir, { recursive: true, force: true });
  }
}

const requested = process.argv.slice(2);
const universalOnly = requested.includes('--universal');
const targets = requested.filter((arg) => arg !== '--universal');
for (const target of targets)
  if (!(target in TARGETS)) throw new Error(`unknown target ${target}: one of ${Object.keys(TARGETS).join(', ')}`);
for (const target of universalOnly ? [] : targets.length ? targets : Object.keys(TARGETS)) packageTarget(target);
if (universalOnly || targets.length === 0) {
  fs.rmSync(bundledDir, { recursive: true, force: true });
  vsce('code-mode-python.vsix');
}
