// Least authority for the worker thread that runs Pyodide. Python reaches this thread's JS globals through
// `import js`, so whatever `process` offers, Python has. The host process also runs under Node's permission
// model (sandbox/nodePermission.ts) inside an OS sandbox (sandbox/bubblewrap.ts); what follows takes away, in this
// realm, what the model does not cover, and makes refusals under Deno read as the OS's. (Pyodide's one need under
// the model, `process.binding('constants')`, is answered in constantsBinding.ts.)
type MutableProcess = Record<string, unknown>;

/** Process powers Python has no business with: killing other processes (the parent), loading native code, reaching Node's internals. */
const WITHHELD = [
  'kill',
  '_kill',
  'dlopen',
  'binding',
  '_linkedBinding',
  'getBuiltinModule',
  'setuid',
  'setgid',
  'setgroups',
  'initgroups',
  'chdir',
  'umask',
  '_debugProcess',
  '_startProfilerIdleNotifier',
];

/**
 * Ways to Node's module loader from the realm Python reaches: Deno hands a CommonJS worker a global `require`
 * (Node does not), and both leave `process.mainModule`, whose `require` loads anything. Taken away on both, so
 * the two mechanisms withhold the same powers.
 */
const LOADERS: [object, string][] = [
  [globalThis, 'require'],
  [process, 'mainModule'],
];

/** Run once Pyodide is set up, before any user code: the withheld functions throw from then on. */
export function withholdProcessPowers(): string[] {
  const target = process as unknown as MutableProcess;
  const withheld: string[] = [];
  for (const [owner, name] of LOADERS) {
    if ((owner as Record<string, unknown>)[name] === undefined) continue;
    Object.defineProperty(owner, name, { value: undefined, writable: false, configurable: false });
    withheld.push(name);
  }
  for (const name of WITHHELD) {
    if (typeof target[name] !== 'function') continue;
    const refuse = () => {
      throw new Error(`process.${name} is not available to code running in Pyodide`);
    };
    Object.defineProperty(target, name, { value: refuse, writable: false, configurable: false });
    withheld.push(name);
  }
  return withheld;
}

/**
 * A Worker started with any `execArgv` (even an empty list) runs without Node's permission model (so it does on
 * Node 20, the oldest Node supported). From here on, asking for one throws, and every worker this realm starts installs
 * the same guard before its own code, so no realm below gets the model switched off either.
 */
export function guardWorkerCreation(): void {
  installWorkerGuard(installWorkerGuard.toString());
}

/** Runs here and, as source text, at the start of every nested worker: it may use nothing from outside itself. */
function installWorkerGuard(source: string): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const threads = require('node:worker_threads') as typeof import('node:worker_threads');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { pathToFileURL } = require('node:url') as typeof import('node:url');
  const Original = threads.Worker;
  const prelude = `(${source})(${JSON.stringify(source)});\n`;
  function Worker(
    this: unknown,
    script: string | URL,
    options: import('node:worker_threads').WorkerOptions = {},
  ): import('node:worker_threads').Worker {
    if (!new.target) throw new TypeError("Class constructor Worker cannot be invoked without 'new'");
    if (options?.execArgv !== undefined) {
      const refused = new Error(
        "a worker cannot be given execArgv in the Pyodide sandbox: it would run without Node's permission model",
      );
      (refused as NodeJS.ErrnoException).code = 'ERR_ACCESS_DENIED';
      throw refused;
    }
    const target = typeof script === 'string' ? pathToFileURL(script).href : script.href;
    const code = options?.eval ? String(script) : `import(${JSON.stringify(target)});`;
    return Reflect.construct(
      Original,
      [prelude + code, { ...options, eval: true }],
      new.target,
    ) as import('node:worker_threads').Worker;
  }
  Worker.prototype = Original.prototype;
  // A started worker's constructor would otherwise hand the unguarded class back.
  Object.defineProperty(Original.prototype, 'constructor', { value: Worker, writable: false, configurable: false });
  Object.defineProperty(threads, 'Worker', { value: Worker, writable: false, configurable: false, enumerable: true });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('node:module') as typeof import('node:module')).syncBuiltinESMExports();
}

/**
 * Under Deno, a refused file operation throws Deno's NotCapable, which carries no errno code: Emscripten's
 * NODEFS passes such an error through as a crash of the instance instead of an OSError. Given the code of a
 * refused permission, Python sees PermissionError, as it would for a file the operating system refuses.
 */
export function refusalsAsErrno(): void {
  const errors = (globalThis as { Deno?: { errors?: { NotCapable?: { prototype: object } } } }).Deno?.errors;
  const refusal = errors?.NotCapable?.prototype;
  if (refusal && !Object.hasOwn(refusal, 'code'))
    Object.defineProperty(refusal, 'code', { value: 'EACCES', writable: false, configurable: false });
}
