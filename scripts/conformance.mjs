#!/usr/bin/env node
// Runs the official MCP conformance suite's server scenarios against `code-mode-mcp --http`. The suite
// needs Node 22+ (it uses the Node 24 the real-VS-Code test host installs) and cannot send a bearer token,
// so it talks to a loopback relay that adds the token to each request, as a configured client would.
// Scenarios that test features this server does not offer are listed, with why, in conformance-expected.yaml;
// any other failure, or an expected one that passes, fails the run.
// Usage: node scripts/conformance.mjs [--scenario NAME]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installedNode24 } from './vscode-host/common.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => process.stdout.write(`[conformance] ${msg}\n`);
const node24 = installedNode24('conformance');

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-conformance-'));
const token = randomBytes(24).toString('base64url');
fs.writeFileSync(path.join(work, 'token'), token, { mode: 0o600 });
const server = spawn(
  process.execPath,
  [
    path.join(root, 'dist', 'cli.js'),
    '--http',
    '--port',
    '0',
    '--token-file',
    path.join(work, 'token'),
    '--storage',
    path.join(work, 'storage'),
  ],
  {
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
const cleanup = () => {
  server.kill('SIGTERM');
  fs.rmSync(work, { recursive: true, force: true });
};
process.on('exit', cleanup);

const serverUrl = await new Promise((resolve, reject) => {
  let log = '';
  server.stderr.setEncoding('utf8').on('data', (text) => {
    log += text;
    const found = /(http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(log);
    if (found) resolve(new URL(found[1]));
  });
  server.once('exit', (code) => reject(new Error(`the server exited (${code}) before listening:\n${log}`)));
});

// The relay: every request goes on to the server with the token, and the response comes back as it streams.
const relay = http.createServer((req, res) => {
  const headers = { ...req.headers, host: serverUrl.host, authorization: `Bearer ${token}` };
  const upstream = http.request(
    { host: serverUrl.hostname, port: serverUrl.port, path: req.url, method: req.method, headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => res.destroy());
  req.pipe(upstream);
});
await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayUrl = `http://127.0.0.1:${relay.address().port}/mcp`;
say(`server ${serverUrl.href}, relay ${relayUrl}`);

const scenario = process.argv.indexOf('--scenario');
const args = [
  path.join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
  'server',
  '--url',
  relayUrl,
  '--expected-failures',
  path.join(root, 'scripts', 'conformance-expected.yaml'),
  ...(scenario > 0 ? ['--scenario', process.argv[scenario + 1]] : []),
];
const suite = spawn(node24, args, { stdio: 'inherit', cwd: work });
const code = await new Promise((resolve) => suite.once('exit', (c) => resolve(c ?? 1)));
relay.close();
process.exit(code);
