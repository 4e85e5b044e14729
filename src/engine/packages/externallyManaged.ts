// PEP 668: an interpreter whose standard library folder holds an EXTERNALLY-MANAGED file belongs to the operating
// system (Debian's /usr/bin/python3), and pip refuses to install into it outside a virtual environment. Asked of
// the interpreter itself, since only it knows its stdlib folder and whether it runs in a virtual environment.
import { execFile } from 'node:child_process';

const PROBE = [
  'import os, sys, sysconfig',
  'in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)',
  'marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")',
  'print("managed" if not in_venv and os.path.isfile(marker) else "free")',
].join('\n');

/** Whether pip refuses to install into `python` (PEP 668); false when that cannot be told. */
export function isExternallyManaged(python: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      python,
      ['-c', PROBE],
      { encoding: 'utf8', timeout: 30_000, shell: false, windowsHide: true },
      (error, stdout) => {
        resolve(!error && stdout.trim() === 'managed');
      },
    );
  });
}
