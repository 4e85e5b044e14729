// The host every part of the escape suite (test/sandbox/escape*.test.ts) attacks, set up the same way for each:
// an engine made as the CLI makes it, a folder outside the workspace with a secret in it, a workspace holding links
// that lead out of it, a web server and an inspector on loopback, a secret in the environment, and the bystanders
// every attack must leave unharmed.
import { after, before } from 'node:test';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as inspector from 'node:inspector';
import type * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { createEngine } from '../../src/engine/index';
import { Bystanders } from './bystanders';
import { testStorageDir } from './mcp';
import { inNestedWorker, settleInWorker, type Run } from './pyodideProbe';
import { sandboxUnderTest, underDeno } from './sandboxUnderTest';

export const linux = process.platform === 'linux';
/** How each boundary refuses: bubblewrap hides every other process and the host's network; Deno refuses the call itself. */
export const signalRefused = underDeno ? /^ok:err:Requires run access/ : /^ok:err:kill ESRCH/;
export const connectRefused = underDeno ? /^ok:err:Requires net access/ : /^ok:err:connect (ECONNREFUSED|ENETUNREACH)/;

export interface EscapeTarget {
  readonly engine: Engine;
  /** A folder outside the workspace, holding secret.txt. */
  readonly outside: string;
  /** The workspace: notes.txt, and links to outside/secret.txt, to outside, and to outside/not-yet.txt (dangling). */
  readonly workspace: string;
  readonly bystanders: Bystanders;
  /** The port of the host's web server on loopback, and how many requests reached it. */
  readonly webPort: number;
  readonly webHits: number;
  /** The port of this process's inspector, listening on loopback. */
  readonly inspectorPort: number;
  /** Runs code in the attacker's Pyodide session. */
  readonly attacker: Run;
  /** Runs a nested worker's body from the attacker's session: its outcome as settleInWorker gives it. */
  nested(body: string): Promise<string>;
  assertUnharmed(): Promise<void>;
}

/** Sets the host up before the calling suite's tests and takes it down after them. */
export function escapeTarget(): EscapeTarget {
  let engine: Engine;
  let outside: string;
  let workspace: string;
  let bystanders: Bystanders;
  let web: http.Server;
  let webPort = 0;
  let webHits = 0;
  let inspectorPort = 0;
  const attacker: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'attacker' });
  const bystander: Run = (code) => engine.run({ code, backend: 'pyodide', session: 'bystander' });

  before(async () => {
    process.env.CODE_MODE_TEST_SECRET = 'do-not-leak';
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'host secret');
    workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-workspace-')));
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'the workspace');
    // Links a person's workspace may hold, leading out of it: to a file, to a folder, and to nothing yet.
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'secret-link.txt'));
    fs.symlinkSync(outside, path.join(workspace, 'outside-link'));
    fs.symlinkSync(path.join(outside, 'not-yet.txt'), path.join(workspace, 'dangling-link.txt'));
    bystanders = new Bystanders(bystander);
    web = http.createServer((_req, res) => {
      webHits++;
      res.end('reached the host');
    });
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    webPort = (web.address() as net.AddressInfo).port;
    // An inspector listening on loopback, as a Node process opens one on SIGUSR1: the target of the chain.
    inspector.open(0, '127.0.0.1', false);
    inspectorPort = Number(new URL(inspector.url()!).port);
    // The network setting named as VS Code names it (src/vscode/settings.ts): the engine names none of its own.
    engine = createEngine({
      storageDir: testStorageDir,
      workspaceRoots: [workspace],
      pyodide: { sandbox: sandboxUnderTest },
      config: { settingNames: { pyodideNetwork: 'setting codeMode.pyodide.network' } },
    });
    await bystanders.settle();
  });

  after(async () => {
    inspector.close();
    web.close();
    bystanders.dispose();
    await engine?.dispose();
    fs.rmSync(outside, { recursive: true, force: true });
    fs.rmSync(workspace, { recursive: true, force: true });
    delete process.env.CODE_MODE_TEST_SECRET;
  });

  return {
    get engine() {
      return engine;
    },
    get outside() {
      return outside;
    },
    get workspace() {
      return workspace;
    },
    get bystanders() {
      return bystanders;
    },
    get webPort() {
      return webPort;
    },
    get webHits() {
      return webHits;
    },
    get inspectorPort() {
      return inspectorPort;
    },
    attacker,
    nested: (body) => settleInWorker(attacker, inNestedWorker(body)),
    assertUnharmed: () => bystanders.assertUnharmed(),
  };
}
