// The cells this backend sends a kernel: the setup that loads kernel_support.py and the shared runtime
// into a fresh kernel, and the one-line calls into it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { assetsDir } from '../../paths';

function readAsset(name: string): string {
  return fs.readFileSync(path.join(assetsDir(), 'python', name), 'utf8');
}

/** The one-line cell that calls kernel_support.py's `name` with `request`, which travels as base64 JSON, never as code. */
export function supportCell(name: 'run' | 'process' | 'refresh', request: unknown): string {
  return `__import__("_code_mode_kernel").${name}("${Buffer.from(JSON.stringify(request)).toString('base64')}")`;
}

/** The cell that loads kernel_support.py and the shared modules into a fresh kernel. */
export function setupCell(marker: string, cwd: string | undefined, scratch: string | undefined): string {
  const encode = (text: string) => Buffer.from(text).toString('base64');
  const args = encode(
    JSON.stringify({
      marker,
      cwd: cwd ?? null,
      scratch: scratch ?? null,
      sources: {
        cell: readAsset('cell.py'),
        user_input: readAsset('user_input.py'),
        code_mode: readAsset('code_mode.py'),
        displays: readAsset('displays.py'),
      },
    }),
  );
  return [
    'def _code_mode_setup():',
    '    import base64, json, sys, types',
    '    module = types.ModuleType("_code_mode_kernel")',
    `    source = base64.b64decode("${encode(readAsset('kernel_support.py'))}").decode("utf-8")`,
    '    exec(compile(source, "<code-mode kernel_support>", "exec"), module.__dict__)',
    '    sys.modules["_code_mode_kernel"] = module',
    `    module.setup(**json.loads(base64.b64decode("${args}").decode("utf-8")))`,
    '_code_mode_setup()',
    'del _code_mode_setup',
  ].join('\n');
}
