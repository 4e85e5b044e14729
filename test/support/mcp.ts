import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { createHash } from 'node:crypto';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunResult } from '../../src/engine/types';

export const repoRoot = path.resolve(__dirname, '..', '..');
export const cliPath = path.join(repoRoot, 'dist', 'cli.js');

/**
 * Shared across test files so the Pyodide memory snapshot is made once per checkout, as a user's would be once per
 * machine; two checkouts tested at once (a clean clone beside a working one) keep apart.
 */
export const testStorageDir = path.join(
  os.tmpdir(),
  `code-mode-python-test-storage-${createHash('sha256').update(repoRoot).digest('hex').slice(0, 8)}`,
);

export interface StdioConnection {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  close(): Promise<void>;
}

/**
 * A real MCP client talking to the built CLI over stdio; `capabilities` are the client's own (e.g. elicitation).
 * It lists the tools first, so the SDK's client checks every structured result against its tool's output schema
 * (the server does not check run_python's on the way out).
 */
export async function connectStdio(
  args: string[] = [],
  env: Record<string, string> = {},
  capabilities: ClientCapabilities = {},
): Promise<StdioConnection> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath, '--storage', testStorageDir, ...args],
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'code-mode-tests', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  await client.listTools();
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

export interface RunCall {
  result: RunResult;
  raw: CallToolResult;
}

export async function runPython(
  client: Client,
  args: Record<string, unknown>,
  options: {
    signal?: AbortSignal;
    onprogress?: (p: { progress: number; message?: string }) => void;
    timeout?: number;
  } = {},
): Promise<RunCall> {
  const raw = (await client.callTool({ name: 'run_python', arguments: args }, undefined, {
    timeout: options.timeout ?? 120_000,
    signal: options.signal,
    onprogress: options.onprogress,
  })) as CallToolResult;
  return { result: raw.structuredContent as unknown as RunResult, raw };
}
