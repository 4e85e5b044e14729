// Mocha entry for the real-VS-Code suite: same contract as @vscode/test-electron's
// extensionTestsPath (export run(): Promise<void>). Bundled by `node esbuild.mjs --tests`
// to out/test/vscode/index.js and loaded inside the extension host by
// scripts/vscode-host/run.mjs (code-server) or scripts/vscode-host/electron.mjs.
//   CODE_MODE_TEST_GREP   only run tests whose full title matches this regular expression
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import Mocha from 'mocha';

export function run(): Promise<void> {
  // The spec reporter writes through console.log, which the extension host forwards to the
  // workbench as log lines; write to the extension host's real stdout instead. Under
  // code-server that stdout is part of the server's output, which run.mjs echoes.
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => {
    process.stdout.write(util.format(...args) + '\n');
  };
  const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', color: false, timeout: 60_000 });
  if (process.env.CODE_MODE_TEST_GREP) mocha.grep(new RegExp(process.env.CODE_MODE_TEST_GREP));

  const suiteDir = path.join(__dirname, 'suite');
  const files = fs.existsSync(suiteDir)
    ? fs
        .readdirSync(suiteDir)
        .filter((f) => f.endsWith('.test.js'))
        .sort()
    : [];
  if (!files.length)
    return Promise.reject(new Error(`no *.test.js under ${suiteDir}; build with: node esbuild.mjs --tests`));
  for (const f of files) mocha.addFile(path.join(suiteDir, f));

  return new Promise((resolve, reject) => {
    try {
      mocha.run((failures) => (failures ? reject(new Error(`${failures} test(s) failed`)) : resolve()));
    } catch (e) {
      reject(e);
    }
  });
}
