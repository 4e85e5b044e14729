// The sandbox wherever Node lives. bubblewrap runs the very runtime the server runs on, so that runtime must be
// inside the sandbox: a Node under /tmp (a portable install, the real-VS-Code test host) was once hidden by the
// sandbox's fresh /tmp and Pyodide silently fell back to Node's permission model. And only the runtime may come
// in with it: not the other files of its folder, which may be /tmp itself. Each case runs the engine under a
// copy of this Node placed there (test/support/runtimeProbe.ts).
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { repoRoot } from '../support/mcp';

const linux = process.platform === 'linux';
const probeScript = path.join(repoRoot, 'test', 'support', 'runtimeProbe.ts');

interface ProbeResult {
  execPath: string;
  sandbox: { mechanism: string; complete: boolean; network: string; gaps: string[] };
  python: { stdout: string; diagnostics?: unknown };
  inside: string;
  reads: Record<string, string>;
  connects: Record<string, string>;
}

/** This Node at `target` (a hard link where the file system allows one, else a copy). */
function placeNode(target: string): void {
  fs.mkdirSync(path.dirname(target), { recursive: true });
  const source = fs.realpathSync(process.execPath);
  try {
    fs.linkSync(source, target);
  } catch {
    fs.copyFileSync(source, target, fs.constants.COPYFILE_EXCL);
    fs.chmodSync(target, 0o755);
  }
}

/** Runs the probe under the Node at `node` and returns what it printed. */
async function probeUnder(node: string, paths: string[] = []): Promise<ProbeResult> {
  const child = spawn(node, ['--import', 'tsx', probeScript, JSON.stringify({ paths })], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  assert.equal(code, 0, `the probe under ${node} failed:\n${stderr}`);
  return JSON.parse(stdout.trim().split('\n').pop()!) as ProbeResult;
}

function assertCompleteAndRan(result: ProbeResult, node: string): void {
  assert.equal(result.execPath, node, 'the probe ran under the placed Node');
  assert.deepEqual(result.sandbox, { mechanism: 'bubblewrap', complete: true, network: 'off', gaps: [] });
  assert.equal(result.python.stdout, 'Pyodide ran, Python 3\n', JSON.stringify(result.python.diagnostics));
  // Inside: pid 2 of bwrap's PID namespace, running that same Node.
  assert.equal(result.inside, `ok:ok:${JSON.stringify({ pid: 2, execPath: node })}`);
}

/** `file` cannot be read from inside the sandbox, and is not even there. */
function assertAbsent(result: ProbeResult, file: string): void {
  assert.match(result.reads[file]!, /^ok:err:/, `${file} was readable: ${result.reads[file]}`);
  assert.match(result.connects[file]!, /^ok:err:connect ENOENT/, `${file} is in the sandbox: ${result.connects[file]}`);
}

describe('the sandbox wherever Node lives', { skip: !linux && 'bubblewrap is Linux-only' }, () => {
  const made: string[] = [];
  let outside: string;
  let socketPath: string;
  let socketServer: net.Server;
  let socketHits = 0;

  before(async () => {
    // Under /tmp itself, not os.tmpdir(): the sandbox's fresh /tmp is what hid Node.
    outside = fs.mkdtempSync('/tmp/code-mode-outside-');
    made.push(outside);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret');
    socketPath = path.join(outside, 'host.sock');
    socketServer = net.createServer((socket) => {
      socketHits++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => socketServer.listen(socketPath, resolve));
  });

  after(() => {
    socketServer?.close();
    for (const item of made) fs.rmSync(item, { recursive: true, force: true });
  });

  test('Node in a folder under /tmp: the sandbox is complete and Pyodide runs there', async () => {
    const folder = fs.mkdtempSync('/tmp/code-mode-node-');
    made.push(folder);
    const node = path.join(folder, 'bin', 'node');
    placeNode(node);
    assertCompleteAndRan(await probeUnder(node), node);
  });

  test('Node straight in /tmp: the sandbox holds that file, not the rest of /tmp or of its folder', async () => {
    const node = `/tmp/code-mode-node-${randomBytes(6).toString('hex')}`;
    made.push(node);
    placeNode(node);
    const secret = path.join(outside, 'secret.txt');
    const result = await probeUnder(node, [secret, socketPath]);
    assertCompleteAndRan(result, node);
    assertAbsent(result, secret);
    assertAbsent(result, socketPath);
    assert.equal(socketHits, 0, 'a Unix socket elsewhere in /tmp was reached');
  });

  test('Node in a folder of other things: only Node comes in, not the files beside it', async () => {
    const folder = fs.mkdtempSync('/tmp/code-mode-node-');
    made.push(folder);
    const node = path.join(folder, 'node');
    placeNode(node);
    const beside = path.join(folder, 'notes.txt');
    fs.writeFileSync(beside, 'beside node');
    const result = await probeUnder(node, [beside]);
    assertCompleteAndRan(result, node);
    assertAbsent(result, beside);
  });
});
