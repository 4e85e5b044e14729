import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface InterpreterReport {
  executable: string;
  version: string;
  packages: { name: string; version: string }[];
  /** More packages are installed than listed. */
  packagesTruncated: boolean;
}

const MAX_PACKAGES = 200;

// Reads the interpreter's own view: importlib.metadata sees what `pip list` sees, without pip's start-up cost.
const PROBE = `
import importlib.metadata as m, json, sys
seen = {}
for d in m.distributions():
    name = d.metadata["Name"]
    if name and name.lower() not in seen:
        seen[name.lower()] = (name, d.version)
print(json.dumps({"executable": sys.executable, "version": sys.version.split()[0], "packages": sorted(seen.values(), key=lambda p: p[0].lower())}))
`;

/** Version and installed packages of an interpreter, asked in a short-lived process (never through a shell). */
export async function inspectInterpreter(executable: string): Promise<InterpreterReport> {
  const { stdout } = await execFileAsync(executable, ['-I', '-c', PROBE], {
    timeout: 15_000,
    maxBuffer: 8 * 1024 * 1024,
  });
  const parsed = JSON.parse(stdout) as { executable: string; version: string; packages: [string, string][] };
  return {
    executable: parsed.executable,
    version: parsed.version,
    packages: parsed.packages.slice(0, MAX_PACKAGES).map(([name, version]) => ({ name, version })),
    packagesTruncated: parsed.packages.length > MAX_PACKAGES,
  };
}
