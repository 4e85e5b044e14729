// Where the extension's MCP endpoint listens: a Unix domain socket (a named pipe on Windows) in a folder only this
// user can enter, so there is no TCP port for other local users to try, nor for VS Code's port detection to
// auto-forward and list in the Ports view. VS Code connects to MCP servers over sockets and pipes from 1.105;
// older ones get the loopback port.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { socketPathIn } from '../engine/index';
import type { HttpMcpServer } from '../mcp/index';

/** The first VS Code that connects to MCP servers over Unix domain sockets and Windows named pipes. */
const SOCKETS_SINCE: [number, number] = [1, 105];

function atLeast(version: string, [major, minor]: [number, number]): boolean {
  const [m = 0, n = 0] = version.split('.').map((part) => parseInt(part, 10));
  return m > major || (m === major && n >= minor);
}

/** A socket (or pipe) for the endpoint, or undefined where this VS Code needs a port; `release` removes its folder. */
export function loopbackSocket(version = vscode.version): { path: string; release(): void } | undefined {
  if (!atLeast(version, SOCKETS_SINCE)) return undefined;
  if (process.platform === 'win32')
    return { path: `\\\\.\\pipe\\code-mode-mcp-${randomBytes(12).toString('hex')}`, release: () => undefined };
  // mkdtemp makes the folder 0700: only this user may reach the socket in it.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-mcp-'));
  const socket = socketPathIn(dir, 'mcp.sock');
  if (!socket) {
    fs.rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  return { path: socket, release: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** The URI VS Code's MCP client is given: the socket with the request path in the fragment, by VS Code's convention. */
export function loopbackUri(endpoint: HttpMcpServer): vscode.Uri {
  if (!endpoint.socketPath) return vscode.Uri.parse(endpoint.url);
  return vscode.Uri.from({
    scheme: process.platform === 'win32' ? 'pipe' : 'unix',
    path: endpoint.socketPath,
    fragment: new URL(endpoint.url).pathname,
  });
}
