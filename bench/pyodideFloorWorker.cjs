// The worker thread of pyodideFloorServer.ts (plain CommonJS: a worker thread does not get tsx's loader): Pyodide
// loaded from the build's copy, each message's code compiled and run in one namespace, answered with what it
// printed (or the error's text).
const { parentPort, workerData } = require('node:worker_threads');

async function main() {
  const { loadPyodide } = require(`${workerData.indexURL}pyodide.js`);
  const pyodide = await loadPyodide({ indexURL: workerData.indexURL });
  const decoder = new TextDecoder();
  let printed = '';
  pyodide.setStdout({
    write: (bytes) => {
      printed += decoder.decode(bytes, { stream: true });
      return bytes.length;
    },
  });
  const run = pyodide.runPython(
    'def _floor_run(code, cell):\n    exec(compile(code, "<cell %d>" % cell, "exec"), globals())\n_floor_run',
  );
  let cells = 0;
  parentPort.on('message', (code) => {
    printed = '';
    try {
      run(code, ++cells);
    } catch (error) {
      printed = String(error);
    }
    parentPort.postMessage(printed);
  });
  parentPort.postMessage('loaded');
}

void main();
