// Installs and version checks inside the Pyodide worker. The backend has already read and checked every
// wheel and put the Pyodide-distribution files a step needs into the package cache, so nothing here downloads
// except micropip, which asks PyPI. Pyodide's loadPackage never throws (failures go to errorCallback) and can
// stay pending forever, so every wait is bounded and its result checked.
import type { PyodideInterface } from 'pyodide';
import type { HarnessCode } from './harnessCode';
import type { InstallStep, LogLevel, PackagesMessage, PackagesReply } from './protocol';
import { errorText } from '../../errorText';

/** Loading from the local package cache; packages with many shared libraries take a few seconds. */
const LOAD_TIME_LIMIT_MS = 120_000;
/** micropip resolves and downloads from PyPI. */
const MICROPIP_TIME_LIMIT_S = 120;

type PyDict = ReturnType<PyodideInterface['toPy']>;

function normalize(name: string): string {
  return name.replace(/[-_.]+/g, '-').toLowerCase();
}

function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within ${ms / 1000} s (it may still complete in the background)`)),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The last line of a Python traceback ("ValueError: ..."), which is what a person needs. */
function lastLine(error: unknown): string {
  const text = errorText(error);
  return text.trimEnd().split('\n').pop() ?? text;
}

export class WorkerPackages {
  private readonly helpers: PyDict;

  constructor(
    private readonly py: PyodideInterface,
    private readonly log: (level: LogLevel, message: string) => void,
    harness: HarnessCode,
  ) {
    // Now, before any user code runs: packages.py takes what it calls at load (user code may replace builtins).
    this.helpers = py.toPy({}) as PyDict;
    harness.exec('packages', this.helpers);
  }

  /** Never rejects: the backend is waiting for exactly one reply. */
  async handle(request: PackagesMessage): Promise<PackagesReply> {
    const errors: (string | undefined)[] = [];
    try {
      for (const step of request.steps) {
        try {
          await this.install(step);
          errors.push(undefined);
        } catch (error) {
          errors.push(errorText(error));
        }
      }
      const versions = this.versions(request.versionsOf);
      return { type: 'packagesDone', id: request.id, errors, versions };
    } catch (error) {
      return {
        type: 'packagesDone',
        id: request.id,
        errors,
        versions: {},
        failed: `the package request failed in Pyodide: ${lastLine(error)}`,
      };
    }
  }

  private async install(step: InstallStep): Promise<void> {
    switch (step.kind) {
      case 'wheel':
        this.call('remove_distribution', step.name);
        try {
          this.py.unpackArchive(new Uint8Array(Buffer.from(step.base64, 'base64')), 'wheel', {
            extractDir: this.call('site_packages') as string,
          });
        } catch (error) {
          throw new Error(`could not unpack ${step.filename}: ${lastLine(error)}`);
        }
        return;
      case 'pyodide':
        await this.loadFromDistribution(step.name);
        return;
      case 'micropip': {
        await this.loadFromDistribution('micropip');
        this.helpers.set('_requirement', step.requirement);
        try {
          await bounded(
            this.py.runPythonAsync(`await micropip_install(_requirement, ${MICROPIP_TIME_LIMIT_S})`, {
              globals: this.helpers,
            }) as Promise<unknown>,
            (MICROPIP_TIME_LIMIT_S + 5) * 1000,
            'micropip',
          );
        } catch (error) {
          const reason = lastLine(error);
          throw new Error(
            /TimeoutError/.test(reason)
              ? `micropip did not finish within ${MICROPIP_TIME_LIMIT_S} s`
              : `micropip could not install ${step.requirement}: ${reason}`,
          );
        }
        return;
      }
    }
  }

  private async loadFromDistribution(name: string): Promise<void> {
    const problems: string[] = [];
    const loaded = await bounded(
      this.py.loadPackage([name], {
        messageCallback: (message: string) => this.log('info', message),
        errorCallback: (message: string) => problems.push(message),
      }),
      LOAD_TIME_LIMIT_MS,
      `loading ${name}`,
    );
    const wanted = normalize(name);
    const present =
      loaded.some((p) => normalize(p.name) === wanted) ||
      Object.keys(this.py.loadedPackages).some((p) => normalize(p) === wanted);
    if (!present) throw new Error(`Pyodide could not load ${name}: ${problems.join('; ') || 'it was not loaded'}`);
  }

  /** Installed version of each distribution, or null; no JSON on the way (user code may have replaced json's). */
  private versions(names: string[]): Record<string, string | null> {
    const found = this.call('versions', ...names) as PyDict;
    try {
      const versions = found.toJs() as string[];
      return Object.fromEntries(names.map((name, i) => [name, versions[i] || null]));
    } finally {
      found.destroy();
    }
  }

  private call(name: string, ...args: unknown[]): unknown {
    const fn = this.helpers.get(name) as ((...a: unknown[]) => unknown) & { destroy(): void };
    try {
      return fn(...args);
    } finally {
      fn.destroy();
    }
  }
}
