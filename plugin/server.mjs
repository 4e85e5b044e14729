// The agent plugin's MCP server. Where the plugin ships beside the bundled server (in the npm package or a
// checkout), that one runs: the same version, offline. A plugin copied on its own (a marketplace
// install) runs the published package, as MCP servers are installed. The command is fixed: nothing from the host
// reaches it.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const bundled = new URL('../dist/cli.js', import.meta.url);
if (fs.existsSync(fileURLToPath(bundled))) {
  await import(bundled.href);
} else {
  // npx is a .cmd script on Windows, which Node starts only through a shell; the arguments are constants.
  const npx = spawn('npx', ['-y', 'code-mode-python'], { stdio: 'inherit', shell: process.platform === 'win32' });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => npx.kill(signal));
  npx.on('exit', (code, signal) => (signal ? process.kill(process.pid, signal) : process.exit(code ?? 1)));
}
