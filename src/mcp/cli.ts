// The code-mode-mcp command (built to dist/cli.js): its flags, the engine, stores and code mode it sets up, and
// the MCP server it serves over stdio or, with --http, Streamable HTTP (httpCli.ts).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import {
  defaultApprovalPolicy,
  isApprovalMode,
  parseToolPatterns,
  type ApprovalPolicy,
  attachCodeMode,
  isBackendKind,
  timeoutProblem,
  isNetworkAccess,
  isSandboxChoice,
  createEngine,
  defaultStorageDir,
  LOCAL_JUPYTER,
  type JupyterSettings,
  RunHistory,
  createStores,
  type Logger,
  FileSettings,
  type SettingKey,
  type SettingNames,
  errorText,
} from '../engine/index';
import { PRODUCT_VERSION } from '../version';
import { HTTP_FLAGS, HTTP_HELP, parseHttpFlags, serveHttp } from './httpCli';
import { consoleToLog } from './consoleLines';
import type { McpServerOptions } from './server';

const HELP = `code-mode-mcp ${PRODUCT_VERSION} — the Code Mode for Python MCP server over stdio or Streamable HTTP

Usage: code-mode-mcp [options]

  --backend <pyodide|python|jupyter>  default backend for run_python (default: pyodide)
  --python <path>             interpreter for the python backend
                              (default: $CODE_MODE_PYTHON, then python3/python on PATH)
  --jupyter-url <url|local>   adds the jupyter backend: a kernel per session on this Jupyter Server
                              (JupyterHub: https://HUB/user/NAME/), or "local" for one started
                              from the --python interpreter (needs jupyter_server and ipykernel)
  --jupyter-token <token>     the server's token (default: $CODE_MODE_JUPYTER_TOKEN)
  --jupyter-kernel <name>     the kernel spec to start (default: the server's default)
  --timeout <seconds>         default run time limit (default: 30)
  --storage <dir>             caches and stores (default: ${defaultStorageDir()})
  --heap-mb <n>               Pyodide WebAssembly heap cap in MB (default: 1024)
  --python-memory-mb <n>      memory cap of each workspace-Python session in MB, 0 for none: each
                              process's private data, and all its processes together, shared memory
                              included (default: 4096; enforced on Linux)
  --pyodide-workspace-write   let code in Pyodide change files in --workspace (default: read-only)
  --pyodide-network <off|on>  whether code in the Pyodide sandbox may use the network (default: off)
  --pyodide-sandbox <auto|bubblewrap|deno>
                              what confines Pyodide: bubblewrap (Linux), Deno's permission model
                              (the optional dependency "deno", or deno on PATH), or auto: bubblewrap
                              where it works, else Deno (default: auto)
  --max-sessions <n>          live sessions per backend; past it the least recently used idle
                              one is ended and its next run is told (default: 8)
  --pyodide-only              refuse the python and jupyter backends (e.g. for an untrusted workspace)
  --servers <file>            MCP servers Python may call, as {"servers": {name: {command, args, env}}}
                              (watched; reloaded on change)
  --workspace <dir>           the workspace folder (default: the current folder); runs may show
                              images and text files in it, or in the session's own scratch folder
                              under <storage>/scratch ($CODE_MODE_SCRATCH), by printing their paths
  --wheelhouse <dir>          a folder of .whl files that packages installs and auto-install look in
                              first, e.g. filled by "pip download" (default: $CODE_MODE_WHEELHOUSE)
  --tool-approval <ask|allow|readonly>
                              tool calls from Python to tools not marked read-only: ask the client's
                              person by elicitation (refused at once without it), allow them, or refuse
                              them (default: ask)
  --auto-approve <list>       tools that need no question, as server.tool or server.* separated by commas
  --warm                      start the default backend before the first call
  --no-pyodide-spare          keep no spare Pyodide interpreter: by default, with Pyodide as the default
                              backend, one is started with the server and again whenever a new session
                              takes it, so a new session's first run does not wait ~1 s for Pyodide to
                              start (costs the memory of one idle Pyodide session, about 150 MB)
${HTTP_HELP}
  -h, --help                  show this help

Logs go to stderr; stdout carries only MCP messages.`;

/** How refusals of tool calls name the CLI's approval flags. */
const CLI_APPROVAL_NAMES: ApprovalPolicy['names'] = {
  mode: 'flag --tool-approval',
  autoApprove: 'flag --auto-approve',
};

/** How the engine's messages tell a CLI user to change a setting. */
const CLI_SETTING_NAMES: SettingNames = {
  timeout: 'flag --timeout, or the environment tool with key timeout_s',
  wheelhouse: '--wheelhouse / CODE_MODE_WHEELHOUSE',
  maxSessions: 'flag --max-sessions',
  jupyterUrl: 'flag --jupyter-url URL|local',
  jupyterKernel: 'flag --jupyter-kernel NAME',
  pyodideNetwork: 'flag --pyodide-network on',
};

/** The CLI's entire state comes from argv; anything wrong exits with a message and status 2. */
function parseCli(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      backend: { type: 'string' },
      python: { type: 'string' },
      'jupyter-url': { type: 'string' },
      'jupyter-token': { type: 'string' },
      'jupyter-kernel': { type: 'string' },
      timeout: { type: 'string' },
      storage: { type: 'string' },
      'heap-mb': { type: 'string' },
      'pyodide-network': { type: 'string' },
      'pyodide-sandbox': { type: 'string' },
      'pyodide-workspace-write': { type: 'boolean' },
      'python-memory-mb': { type: 'string' },
      'max-sessions': { type: 'string' },
      warm: { type: 'boolean' },
      'no-pyodide-spare': { type: 'boolean' },
      'pyodide-only': { type: 'boolean' },
      servers: { type: 'string' },
      wheelhouse: { type: 'string' },
      workspace: { type: 'string' },
      'tool-approval': { type: 'string' },
      'auto-approve': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      ...HTTP_FLAGS,
    },
    strict: true,
  });
  const backend = values.backend ?? 'pyodide';
  // Flags the person typed win over settings saved by `configure`.
  const explicit = new Set<SettingKey>([
    ...(values.backend !== undefined ? (['default_backend'] as const) : []),
    ...(values.timeout !== undefined ? (['timeout_s'] as const) : []),
    ...(values.python !== undefined ? (['python_path'] as const) : []),
  ]);
  if (!isBackendKind(backend)) throw new Error(`--backend must be "pyodide", "python" or "jupyter", not "${backend}"`);
  const jupyter = jupyterFlags(
    values['jupyter-url'],
    values['jupyter-token'] ?? process.env.CODE_MODE_JUPYTER_TOKEN,
    values['jupyter-kernel'],
  );
  if (backend === 'jupyter' && !jupyter) throw new Error('--backend jupyter needs --jupyter-url <url|local>');
  const timeoutS = values.timeout === undefined ? undefined : Number(values.timeout);
  const timeoutError = timeoutS === undefined ? undefined : timeoutProblem(timeoutS, '--timeout');
  if (timeoutError) throw new Error(timeoutError);
  const pyodideOnly = values['pyodide-only'] ?? false;
  if (pyodideOnly && backend !== 'pyodide')
    throw new Error(`--pyodide-only cannot be combined with --backend ${backend}`);
  const heapMb = values['heap-mb'] === undefined ? undefined : Number(values['heap-mb']);
  if (heapMb !== undefined && !(Number.isInteger(heapMb) && heapMb >= 64))
    throw new Error('--heap-mb must be a whole number of at least 64');
  const pythonMemoryMb = values['python-memory-mb'] === undefined ? undefined : Number(values['python-memory-mb']);
  if (pythonMemoryMb !== undefined && !(Number.isInteger(pythonMemoryMb) && pythonMemoryMb >= 0))
    throw new Error('--python-memory-mb must be a whole number of MB (0 for no cap)');
  const network = values['pyodide-network'] ?? 'off';
  if (!isNetworkAccess(network)) throw new Error(`--pyodide-network must be "off" or "on", not "${network}"`);
  const sandbox = values['pyodide-sandbox'] ?? 'auto';
  if (!isSandboxChoice(sandbox))
    throw new Error(`--pyodide-sandbox must be "auto", "bubblewrap" or "deno", not "${sandbox}"`);
  const maxSessions = values['max-sessions'] === undefined ? undefined : Number(values['max-sessions']);
  if (maxSessions !== undefined && !(Number.isInteger(maxSessions) && maxSessions >= 1 && maxSessions <= 64))
    throw new Error('--max-sessions must be a whole number from 1 to 64');
  const wheelhouseDir = values.wheelhouse ?? process.env.CODE_MODE_WHEELHOUSE;
  const wheelhouse = wheelhouseDir ? path.resolve(wheelhouseDir) : undefined;
  if (wheelhouse && !fs.statSync(wheelhouse, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`--wheelhouse: ${wheelhouse} is not a folder`);
  const approvalMode = values['tool-approval'] ?? defaultApprovalPolicy.mode;
  if (!isApprovalMode(approvalMode))
    throw new Error(`--tool-approval must be "ask", "allow" or "readonly", not "${approvalMode}"`);
  const autoApprove = parseToolPatterns(values['auto-approve'] ?? '');
  if ('error' in autoApprove) throw new Error(`--auto-approve: ${autoApprove.error}`);
  const approval: ApprovalPolicy = {
    ...defaultApprovalPolicy,
    mode: approvalMode,
    autoApprove,
    names: CLI_APPROVAL_NAMES,
  };
  const http = parseHttpFlags(values);
  return {
    http,
    approval,
    help: values.help ?? false,
    backend,
    jupyter,
    timeoutS,
    heapMb,
    network,
    sandbox,
    workspaceWritable: values['pyodide-workspace-write'] ?? false,
    maxSessions,
    pythonMemoryMb,
    python: values.python,
    storage: values.storage,
    warm: values.warm ?? false,
    pyodideSpare: !(values['no-pyodide-spare'] ?? false),
    pyodideOnly,
    servers: values.servers,
    wheelhouse,
    workspace: path.resolve(values.workspace ?? process.cwd()),
    explicit,
  };
}

function jupyterFlags(
  url: string | undefined,
  token: string | undefined,
  kernelName: string | undefined,
): JupyterSettings | undefined {
  if (url === undefined) {
    if (kernelName !== undefined) throw new Error('--jupyter-kernel needs --jupyter-url');
    return undefined;
  }
  if (url !== LOCAL_JUPYTER) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`--jupyter-url must be an http(s) URL or "${LOCAL_JUPYTER}", not "${url}"`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new Error(`--jupyter-url must be an http(s) URL, not "${url}"`);
  }
  return { url, ...(token ? { token } : {}), ...(kernelName ? { kernelName } : {}) };
}

const stderrLogger: Logger = {
  info: (m) => process.stderr.write(`[code-mode] ${m}\n`),
  warn: (m) => process.stderr.write(`[code-mode] warning: ${m}\n`),
  error: (m) => process.stderr.write(`[code-mode] error: ${m}\n`),
};

async function main(): Promise<void> {
  let cli: ReturnType<typeof parseCli>;
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`code-mode-mcp: ${errorText(error)}\n\n${HELP}\n`);
    process.exit(2);
  }
  if (cli.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  // stdout is the MCP stream: libraries that talk on the console (the Jupyter client does) talk in the log.
  consoleToLog(stderrLogger);
  const storageDir = cli.storage ?? defaultStorageDir();
  const engine = createEngine({
    config: {
      defaultBackend: cli.backend,
      settingNames: CLI_SETTING_NAMES,
      wheelhouse: cli.wheelhouse,
      ...(cli.timeoutS !== undefined ? { timeoutS: cli.timeoutS } : {}),
      ...(cli.maxSessions !== undefined ? { maxSessions: cli.maxSessions } : {}),
    },
    pythonPath: cli.python,
    pythonMemoryLimitMb: cli.pythonMemoryMb,
    storageDir,
    pyodide: {
      heapLimitMb: cli.heapMb,
      network: cli.network,
      sandbox: cli.sandbox,
      workspaceWritable: cli.workspaceWritable,
      // Both are read on the host: the servers it starts, the wheels it installs into other sessions.
      protectedPaths: [cli.servers && path.resolve(cli.servers), cli.wheelhouse].filter((p): p is string => !!p),
    },
    workspaceRoots: [cli.workspace],
    ...(cli.jupyter ? { jupyter: cli.jupyter } : {}),
    log: stderrLogger,
  });
  if (cli.pyodideOnly) {
    await engine.setBackendEnabled('python', false, 'the python backend is disabled for this server (--pyodide-only)');
    if (cli.jupyter)
      await engine.setBackendEnabled(
        'jupyter',
        false,
        'the jupyter backend is disabled for this server (--pyodide-only)',
      );
  }
  const settings = new FileSettings(storageDir, engine, stderrLogger, cli.python ?? '', {
    memoryLimitMb: cli.pythonMemoryMb,
  });
  await settings.load(cli.explicit);
  // As early as the default backend is known: the spare starts while the client is still connecting.
  if (cli.pyodideSpare && engine.config.defaultBackend === 'pyodide') engine.keepSpare('pyodide');
  const codeMode = await attachCodeMode(
    engine,
    { files: cli.servers ? [path.resolve(cli.servers)] : [], workspaceFolder: cli.workspace },
    stderrLogger,
  );
  codeMode.bridge.approval = cli.approval;
  const stores = createStores(storageDir, stderrLogger);
  // Every run is kept, bounded, in <storage>/history.json, as the extension keeps its own.
  const history = new RunHistory(100, stores.history);
  engine.onRunEvent((event) => history.handle(event));
  engine.setHintsProvider((diagnostics) => stores.learnings.hintsFor(diagnostics));
  const serverOptions: McpServerOptions = {
    origin: 'cli',
    bridge: codeMode.bridge,
    settings,
    stores,
    learningsCount: () => stores.learnings.count(),
  };
  // Set once serving starts: a shutdown asked for before then (a signal, stdin closing) has no server to close.
  let server: { close(): Promise<void> } | undefined = undefined;
  let stopping: Promise<void> | undefined;
  // Signals, end of stdin and the transport closing can all ask at once; the sessions are closed once.
  const shutdown = () => {
    // Each step's failure is logged and the next runs: the engine's sessions and folders must go whatever failed.
    const step = async (what: string, work: () => unknown) => {
      try {
        await work();
      } catch (error) {
        stderrLogger.warn(`shutdown: ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    };
    stopping ??= (async () => {
      await step('closing the server', () => server?.close());
      await step('closing code mode', () => codeMode.dispose());
      await step('saving the run history', () => history.flush());
      await step('ending the sessions', () => engine.dispose());
      process.exit(0);
    })();
    return stopping;
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  // Over HTTP the server lives until a signal (its stdin may well be /dev/null); over stdio, until stdin ends.
  server = cli.http
    ? await serveHttp(engine, cli.http, serverOptions, stderrLogger)
    : await (await import('./stdioServe.js')).serveStdio(engine, serverOptions, cli.backend, stderrLogger, shutdown);
  if (cli.warm) engine.warmUp().catch((error: unknown) => stderrLogger.warn(`warm-up failed: ${String(error)}`));
}

main().catch((error: unknown) => {
  stderrLogger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
