// The built checkouts measured (--root, --compare): each one's CLI reached over stdio with the SDK's client, and
// its engine loaded in this process.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BackendKind, RunResult } from '../src/engine/types';
import { CODE, JUPYTER_PYTHON } from './options';

type EngineModule = typeof import('../src/engine/index');
type PyodideModule = typeof import('../src/engine/backends/pyodide/backend');

/** One built checkout: its CLI over stdio and its engine in-process. */
export interface Target {
  label: string;
  root: string;
  cliPath: string;
  engines: EngineModule;
  pyodide: PyodideModule;
  /** Caches and stores for this target's servers and engines, made by its first cold start. */
  storage: string;
  /** An empty folder given as --workspace, so no mcp_servers.json around the bench is picked up. */
  workspace: string;
}

/**
 * A file under src/engine/ of a checkout, given as `pyodide/backend.ts` or `index.ts`: a backend's files are under
 * engine/backends/ since the layout changed, directly under engine/ in checkouts before it (which --compare may name).
 */
export function backendFile(root: string, file: string): string {
  const moved = path.join(root, 'src', 'engine', 'backends', file);
  return fs.existsSync(moved) ? moved : path.join(root, 'src', 'engine', file);
}

export async function loadTarget(root: string): Promise<Target> {
  root = path.resolve(root);
  const cliPath = path.join(root, 'dist', 'cli.js');
  if (!fs.existsSync(cliPath)) throw new Error(`${cliPath} is missing: build that checkout first (node esbuild.mjs)`);
  const load = (file: string): Promise<unknown> => import(pathToFileURL(backendFile(root, file)).href);
  const engines = (await load('index.ts')) as EngineModule;
  const pyodide = (await load('pyodide/backend.ts')) as PyodideModule;
  const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();
  let label = path.basename(root);
  try {
    const dirty = git('status', '--porcelain', '--untracked-files=no', '--', 'src', 'esbuild.mjs') !== '';
    label = `${git('rev-parse', '--short', 'HEAD')}${dirty ? '+changes' : ''}`;
  } catch {
    // not a git checkout: the folder name will do
  }
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-bench-storage-'));
  const workspace = path.join(storage, 'workspace');
  fs.mkdirSync(workspace);
  return { label, root, cliPath, engines, pyodide, storage, workspace };
}

export interface Connection {
  client: Client;
  close(): Promise<void>;
}

export async function connect(command: string, args: string[], cwd?: string): Promise<Connection> {
  const client = new Client({ name: 'code-mode-bench', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, cwd, stderr: 'ignore' }));
  return { client, close: () => client.close() };
}

export const connectCli = (target: Target, args: string[]) =>
  connect(process.execPath, [target.cliPath, '--storage', target.storage, '--workspace', target.workspace, ...args]);

/** What a server needs on its command line to offer `backend` (the jupyter one: a local Jupyter Server). */
export const backendArgs = (backend: BackendKind): string[] => [
  '--backend',
  backend,
  ...(backend === 'jupyter' ? ['--jupyter-url', 'local', '--python', JUPYTER_PYTHON] : []),
];

export async function runPython(client: Client, args: Record<string, unknown>): Promise<RunResult> {
  const raw = (await client.callTool({ name: 'run_python', arguments: args }, undefined, {
    timeout: 600_000,
  })) as CallToolResult;
  return raw.structuredContent as unknown as RunResult;
}

export async function runOnePlusOne(client: Client): Promise<void> {
  const result = await runPython(client, { code: CODE });
  if (result.stdout !== '2\n') throw new Error(`unexpected result ${JSON.stringify(result)}`);
}

export async function runPythonSucceeds(conn: Connection): Promise<boolean> {
  const result = await runPython(conn.client, { code: CODE });
  return result.success && result.stdout === '2\n';
}
