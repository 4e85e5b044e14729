// The interpreters a person may choose (src/engine/interpreterSearch.ts): on PATH, pyenv's versions, the workspace's
// virtual environments, conda's base and environments; each with its version and real executable, listed once.
// Real interpreters: virtual environments of Debian's python3, made here.
import { after, before, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describeDefaultInterpreter, findInterpreters } from '../../src/engine/interpreterSearch';

const SYSTEM = '/usr/bin/python3';
let base: string;
let home: string;
let workspace: string;

function venv(dir: string): void {
  execFileSync(SYSTEM, ['-m', 'venv', '--without-pip', dir]);
}

before(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-interpreters-')));
  home = path.join(base, 'home');
  workspace = path.join(base, 'app');
  venv(path.join(home, '.pyenv', 'versions', '3.99.0'));
  // Not Python at all: left out.
  fs.mkdirSync(path.join(home, '.pyenv', 'versions', 'broken', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(home, '.pyenv', 'versions', 'broken', 'bin', 'python'), '#!/bin/sh\necho nope\n', {
    mode: 0o755,
  });
  venv(path.join(workspace, '.venv'));
  venv(path.join(workspace, 'service', 'env'));
  venv(path.join(home, 'miniconda3'));
  fs.mkdirSync(path.join(home, 'miniconda3', 'conda-meta'));
  venv(path.join(home, 'miniconda3', 'envs', 'data'));
});

after(() => fs.rmSync(base, { recursive: true, force: true }));

test('PATH, pyenv, workspace venvs and conda, each with its version, once', async () => {
  const found = await findInterpreters({ workspaceRoots: [workspace], home, env: { PATH: '/usr/bin' } });
  const shown = found.map(({ kind, where, path: file }) => [
    kind,
    where,
    file.startsWith(base) ? path.relative(base, file) : file,
  ]);
  assert.deepEqual(shown, [
    ['path', 'python3 on PATH', SYSTEM],
    ['pyenv', 'pyenv 3.99.0', path.join('home', '.pyenv', 'versions', '3.99.0', 'bin', 'python')],
    ['venv', 'venv .venv in app', path.join('app', '.venv', 'bin', 'python')],
    ['venv', 'venv service/env in app', path.join('app', 'service', 'env', 'bin', 'python')],
    ['conda', `conda base (${path.join(home, 'miniconda3')})`, path.join('home', 'miniconda3', 'bin', 'python')],
    ['conda', 'conda env data', path.join('home', 'miniconda3', 'envs', 'data', 'bin', 'python')],
  ]);
  const system = execFileSync(SYSTEM, ['-c', 'import platform; print(platform.python_version())'], {
    encoding: 'utf8',
  }).trim();
  for (const interpreter of found) {
    assert.equal(interpreter.version, system, interpreter.where);
    assert.equal(interpreter.executable, fs.realpathSync(SYSTEM), 'each runs the real executable behind its links');
  }
});

test('the default (CODE_MODE_PYTHON, else python3 on PATH) is described with its real executable and version', async () => {
  const fromPath = await describeDefaultInterpreter({ PATH: '/usr/bin' });
  assert.equal(fromPath?.path, SYSTEM);
  assert.equal(fromPath?.executable, fs.realpathSync(SYSTEM));
  const named = path.join(workspace, '.venv', 'bin', 'python');
  assert.equal((await describeDefaultInterpreter({ PATH: '', CODE_MODE_PYTHON: named }))?.path, named);
  assert.equal(await describeDefaultInterpreter({ PATH: '' }), undefined);
});
