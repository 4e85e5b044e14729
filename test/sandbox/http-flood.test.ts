// The CLI's loopback HTTP endpoint under a flood of TCP connections that never present the token (some send
// nothing, some half a request): started with a low soft limit on file descriptors and a hard one the flood is
// larger than, it runs with its soft limit at the hard one, keeps serving a client that has the token, and closes
// the unauthenticated connections past its cap (each told why), then the rest once their time to authenticate is up.
// Linux only, as prlimit is; nothing is skipped there.
// And under a flood of initializes from a client with the token that never ends its sessions, on a small heap: the
// cap of MCP sessions keeps the server alive, and a client that stays connected keeps its session and its state.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import { silentLogger, type Logger } from '../../src/engine/types';
import { raiseFdSoftLimit, readFdLimits } from '../../src/mcp/fdLimit';
import { DEFAULT_MAX_PREAUTH_CONNECTIONS } from '../../src/mcp/httpConnections';
import { connectHttp, initializeBody, post, until } from '../support/http';
import { cliPath, runPython, testStorageDir } from '../support/mcp';

/** What the server is started with: the soft limit it should raise, and a hard one the flood is larger than. */
const SOFT_LIMIT = 256;
const HARD_LIMIT = 512;
/** 1.5 times the most descriptors the server can ever have: without a cap it runs out whatever it raises. */
const FLOOD = HARD_LIMIT * 1.5;
/** Guards against a hang only; nothing is asserted about how long anything takes. */
const DEADLINE_MS = 180_000;

interface FloodConnection {
  socket: net.Socket;
  connected: boolean;
  closed: boolean;
  received: string;
}

/** `count` connections that never present a token: even ones send nothing, odd ones the start of a request. */
function openFlood(port: number, count: number): FloodConnection[] {
  return Array.from({ length: count }, (_, i) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    const connection: FloodConnection = { socket, connected: false, closed: false, received: '' };
    socket.on('connect', () => {
      connection.connected = true;
      if (i % 2 === 1)
        socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n`);
    });
    socket.on('data', (chunk: Buffer) => (connection.received += chunk.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => (connection.closed = true));
    return connection;
  });
}

/** The JSON-RPC error of a raw HTTP reply, which must say `status` and close the connection. */
function replyError(received: string, status: number): { code: number; message: string } {
  const [head = '', body = ''] = received.split('\r\n\r\n');
  assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} `), received);
  assert.match(head, /\r\nconnection: close/i, received);
  assert.match(head, /\r\ncontent-type: application\/json/i, received);
  const reply = JSON.parse(body) as { jsonrpc: string; id: unknown; error: { code: number; message: string } };
  assert.equal(reply.jsonrpc, '2.0');
  assert.equal(reply.id, null);
  return reply.error;
}

/** Writes raw bytes on a new connection and collects whatever comes back until the server closes it. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = net.connect({ port, host: '127.0.0.1' }, () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('code-mode-mcp --http under a flood of unauthenticated connections', { timeout: 4 * DEADLINE_MS }, () => {
  let child: ChildProcess;
  let stderr = '';
  let url: URL;
  let token: string;
  let flood: FloodConnection[] = [];
  const open = () => flood.filter((c) => c.connected && !c.closed).length;

  before(async () => {
    // This process holds its end of every flood connection: it needs room for them (Node has usually raised its
    // own soft limit already; if not, the helper does).
    await raiseFdSoftLimit(silentLogger);
    const own = readFdLimits();
    assert.ok(
      own && own.soft >= FLOOD + 256,
      `this test needs a soft limit of at least ${FLOOD + 256} open files, it has ${own?.soft}`,
    );

    child = spawn(
      'prlimit',
      [
        `--nofile=${SOFT_LIMIT}:${HARD_LIMIT}`,
        process.execPath,
        cliPath,
        '--http',
        '--backend',
        'python',
        '--storage',
        testStorageDir,
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await until(
      () => /bearer token .*: (\S+)/.test(stderr) || child.exitCode !== null,
      'the CLI says where it serves and with which token',
      DEADLINE_MS,
    );
    url = new URL(/MCP over HTTP on (\S+)/.exec(stderr)![1]!);
    token = /bearer token .*: (\S+)/.exec(stderr)![1]!;
  });

  after(async () => {
    for (const connection of flood) connection.socket.destroy();
    if (child && child.exitCode === null) {
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      });
    }
  });

  test('it runs with its soft limit raised to the hard one, and its log says so', () => {
    // prlimit exec's node, so the child's pid is the server's.
    assert.deepEqual(readFdLimits(child.pid!), { soft: HARD_LIMIT, hard: HARD_LIMIT });
    assert.match(stderr, new RegExp(`file descriptors: .*\\b${HARD_LIMIT}\\b`));
  });

  test('a client with the token initializes and runs a tool while the flood holds the port; connections past the cap are closed, each told why', async () => {
    flood = openFlood(Number(url.port), FLOOD);
    await until(
      () => flood.every((c) => c.connected || c.closed),
      'every flood connection is either open or closed',
      DEADLINE_MS,
    );

    const { client } = await connectHttp(url.href, token);
    try {
      const { result } = await runPython(client, { code: 'print(6 * 7)' });
      assert.equal(result.success, true, JSON.stringify(result.diagnostics));
      assert.equal(result.stdout, '42\n');
    } finally {
      await client.close();
    }

    await until(
      () => open() <= DEFAULT_MAX_PREAUTH_CONNECTIONS,
      `at most ${DEFAULT_MAX_PREAUTH_CONNECTIONS} unauthenticated connections stay open`,
      DEADLINE_MS,
    );
    // This side never closes a flood connection before the end: every one closed was closed by the server.
    const closed = flood.filter((c) => c.closed);
    assert.ok(
      closed.length >= FLOOD - DEFAULT_MAX_PREAUTH_CONNECTIONS,
      `only ${closed.length} of ${FLOOD} were closed`,
    );
    const told = closed.filter((c) => c.received.startsWith('HTTP/1.1 503 '));
    assert.ok(told.length > 0, 'no connection closed for the cap was told why');
    for (const connection of told) assert.match(replyError(connection.received, 503).message, /without a valid token/);
  });

  test('the rest are closed once their time to present the token is up, with a 408 that says so', async () => {
    await until(() => flood.every((c) => c.closed), 'every flood connection is closed', DEADLINE_MS);
    const timedOut = flood.filter((c) => c.received.startsWith('HTTP/1.1 408 '));
    assert.ok(timedOut.length > 0, 'no connection was told it timed out');
    for (const connection of timedOut) assert.match(replyError(connection.received, 408).message, /[Tt]imeout/);
  });

  test('malformed HTTP gets a 400 with a JSON-RPC error, and the server goes on serving; Host, Origin and token checks stand', async () => {
    const received = await rawExchange(Number(url.port), 'NOT HTTP AT ALL\r\n\r\n');
    assert.match(replyError(received, 400).message, /[Bb]ad request/);
    assert.equal((await post(url.href, {})).status, 401);
    assert.equal(
      (await post(url.href, { authorization: `Bearer ${token}`, origin: 'https://evil.example' })).status,
      403,
    );
    assert.equal((await post(url.href, { authorization: `Bearer ${token}`, host: 'evil.example' })).status, 403);
    assert.equal((await post(url.href, { authorization: `Bearer ${token}` })).status, 200);
  });
});

/** The heap the server gets: without a cap on MCP sessions a few hundred initializes exhaust it. */
const SMALL_HEAP_MB = 64;
/** Initializes the flood sends, none of them ever ended (many times what exhausts the heap without a cap). */
const INITIALIZES = 2000;

for (const { flags, cap, batch } of [
  { flags: [], cap: 64, batch: 16 },
  { flags: ['--max-http-sessions', '8'], cap: 8, batch: 2 },
]) {
  describe(
    `code-mode-mcp --http${flags.map((flag) => ` ${flag}`).join('')} with a ${SMALL_HEAP_MB} MB heap under a flood of initializes`,
    { timeout: 4 * DEADLINE_MS },
    () => {
      let child: ChildProcess;
      let stderr = '';

      after(async () => {
        if (child && child.exitCode === null) {
          await new Promise<void>((resolve) => {
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          });
        }
      });

      test(`${INITIALIZES} initializes never ended: the server stays up at ${cap} sessions, and a client that stays connected keeps its session and its Python state`, async () => {
        child = spawn(
          process.execPath,
          [
            `--max-old-space-size=${SMALL_HEAP_MB}`,
            cliPath,
            '--http',
            '--backend',
            'python',
            '--storage',
            testStorageDir,
            ...flags,
          ],
          { stdio: ['ignore', 'ignore', 'pipe'] },
        );
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        await until(
          () => /bearer token .*: (\S+)/.test(stderr) || child.exitCode !== null,
          'the CLI says where it serves and with which token',
          DEADLINE_MS,
        );
        const url = /MCP over HTTP on (\S+)/.exec(stderr)![1]!;
        const token = /bearer token .*: (\S+)/.exec(stderr)![1]!;

        const { client, listening } = await connectHttp(url, token);
        try {
          await listening;
          assert.equal((await runPython(client, { code: 'x = 6 * 7' })).result.success, true);
          // In rounds of fewer than the cap, so initializes under way never fill it (they would get a 503).
          for (let sent = 0; sent < INITIALIZES; sent += batch) {
            const replies = await Promise.all(
              Array.from({ length: batch }, () => post(url, { authorization: `Bearer ${token}` }, initializeBody)),
            );
            for (const reply of replies) assert.equal(reply.status, 200, reply.body);
          }
          const { result } = await runPython(client, { code: 'print(x)' });
          assert.equal(result.stdout, '42\n', JSON.stringify(result));
          assert.equal(result.session_reset, undefined);
        } finally {
          await client.close();
        }
        assert.equal(child.exitCode, null, stderr.slice(-2000));
        // Every initialize past the cap evicted one session the flood left, never the connected client's.
        const evicted = stderr.match(
          /MCP HTTP session \S+ ended: it was evicted .*its client held no connection open\)/g,
        );
        assert.equal(evicted?.length, INITIALIZES + 1 - cap);
      });
    },
  );
}

describe('raiseFdSoftLimit', () => {
  test('raises the soft limit of a process to its hard one with prlimit, and logs it', async () => {
    const sleeper = spawn('prlimit', ['--nofile=64:128', 'sleep', '600'], { stdio: 'ignore' });
    try {
      await until(() => readFdLimits(sleeper.pid!)?.soft === 64, 'the process runs with its low limit', DEADLINE_MS);
      const logged: string[] = [];
      const log: Logger = {
        info: (m) => logged.push(m),
        warn: (m) => logged.push(`warning: ${m}`),
        error: (m) => logged.push(`error: ${m}`),
      };
      const outcome = await raiseFdSoftLimit(log, sleeper.pid!);
      assert.equal(outcome.raised, true, outcome.message);
      assert.deepEqual(readFdLimits(sleeper.pid!), { soft: 128, hard: 128 });
      assert.deepEqual(logged, ['file descriptors: raised the soft limit from 64 to the hard one (128) with prlimit']);
      const again = await raiseFdSoftLimit(log, sleeper.pid!);
      assert.equal(again.raised, false);
      assert.equal(logged[1], 'file descriptors: the soft limit is already the hard one (128)');
    } finally {
      sleeper.kill('SIGKILL');
    }
  });
});
