import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The folder holding the built assets (workers, driver, Pyodide files). Found from the package root so the
 * same code works bundled (dist/cli.js, dist/extension.js) and from sources under tsx in tests.
 */
export function assetsDir(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(dir, 'dist'))) {
      return path.join(dir, 'dist');
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`built assets not found above ${__dirname}: run "npm run build"`);
    dir = parent;
  }
}
