// The MCP floor plus one process hop, for `npm run bench`: the floor's server (floorServer.ts) whose tool first
// sends the code to a Python process over a pipe and waits for its answer. With `echo` the process sends the code
// back: what a backend that runs code in a process of its own cannot go below, before it runs anything. With
// `exec` it compiles and runs the code with its standard output captured, and answers with what was printed: the
// least a run of the workspace-Python backend could cost, with nothing of ours (no protocol, no harness, no
// result shaping) around CPython's own work.
//   node --import tsx bench/hopFloorServer.ts <python> <echo|exec>
import { spawn } from 'node:child_process';
import { serveFloor } from './floorServer';

const ECHO =
  'import os\nwhile True:\n    data = os.read(0, 65536)\n    if not data:\n        break\n    os.write(1, data)\n';

const EXEC = `
import io, json, sys
namespace = {"__name__": "__main__"}
cells = 0
for line in sys.stdin:
    cells += 1
    printed = io.StringIO()
    sys.stdout = printed
    try:
        exec(compile(json.loads(line), "<cell %d>" % cells, "exec"), namespace)
    finally:
        sys.stdout = sys.__stdout__
    sys.stdout.write(json.dumps(printed.getvalue()) + "\\n")
    sys.stdout.flush()
`;

const [python = 'python3', mode = 'echo'] = process.argv.slice(2);
if (mode !== 'echo' && mode !== 'exec') throw new Error(`mode must be echo or exec, not ${mode}`);
const child = spawn(python, ['-c', mode === 'echo' ? ECHO : EXEC], { stdio: ['pipe', 'pipe', 'inherit'] });
let answered: ((line: string) => void) | undefined;
let buffered = '';
child.stdout.setEncoding('utf8').on('data', (text: string) => {
  buffered += text;
  const end = buffered.indexOf('\n');
  if (end < 0) return;
  const line = buffered.slice(0, end);
  buffered = buffered.slice(end + 1);
  const answer = answered;
  answered = undefined;
  answer?.(line);
});

// The child ends with this process: its stdin closes.
serveFloor(`code-mode-bench-hop-floor-${mode}`, async (code) => {
  const line = await new Promise<string>((resolve) => {
    answered = resolve;
    child.stdin.write(`${JSON.stringify(code)}\n`);
  });
  // The exec floor must have run the code: a wrong answer fails the call, and the bench with it.
  if (mode === 'exec' && JSON.parse(line) !== '2\n') throw new Error(`the code printed ${line}`);
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
