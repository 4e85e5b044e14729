// The MCP floor plus one process hop, for `npm run bench`: the floor's server (floorServer.ts) whose tool first
// sends the code to a Python process over a pipe and waits for it to come back. What a backend that runs code in a
// process of its own cannot go below, before it runs anything.
//   node --import tsx bench/hopFloorServer.ts <python>
import { spawn } from 'node:child_process';
import { serveFloor } from './floorServer';

const ECHO =
  'import os\nwhile True:\n    data = os.read(0, 65536)\n    if not data:\n        break\n    os.write(1, data)\n';

const echo = spawn(process.argv[2] ?? 'python3', ['-c', ECHO], { stdio: ['pipe', 'pipe', 'inherit'] });
let answered: (() => void) | undefined;
echo.stdout.on('data', () => {
  const answer = answered;
  answered = undefined;
  answer?.();
});

// The echo process ends with this one: its stdin closes.
serveFloor('code-mode-bench-hop-floor', (code) => {
  return new Promise<void>((resolve) => {
    answered = resolve;
    echo.stdin.write(`${JSON.stringify(code)}\n`);
  });
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
