// A person's run outside VS Code (src/vscode/services/personRuns.ts, given stand-ins for the window, workspace and
// commands): where it runs, and which follow-ups it offers after a time limit, a missing module or a bad argument.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as vscode from 'vscode';
import type { Diagnostics, Engine, RunOptions, RunResult, ScriptRun } from '../../src/engine/index';
import { PersonRunService, type PersonRunServiceDeps } from '../../src/vscode/services/personRuns';
import { settingsWith } from '../support/settingsStandIn';

function resultWith(diagnostics: Diagnostics | null): RunResult {
  return {
    success: diagnostics === null,
    stdout: '',
    stderr: '',
    duration_ms: 1,
    diagnostics,
    backend: 'python',
    session: 'interactive',
    run_id: 'run-1',
  };
}

interface Shown {
  kind: 'information' | 'warning' | 'error';
  message: string;
  items: string[];
}

/**
 * A person-run service whose engine answers every run with `result`; the stand-in window answers a notification
 * with `choose` (undefined: dismissed) and records what it showed, the commands what ran.
 */
function personRuns(options: {
  result?: RunResult;
  settings?: Record<string, unknown>;
  trusted?: boolean;
  choose?: string;
  folders?: string[];
}) {
  const shown: Shown[] = [];
  const runs: RunOptions[] = [];
  const executed: { command: string; args: unknown[] }[] = [];
  const openedSettings: string[] = [];
  const problems: { script: ScriptRun; result: RunResult }[] = [];
  const views = { presented: 0, channelReveals: 0 };
  const inputBoxes: { options: vscode.InputBoxOptions; closeOn: AbortSignal }[] = [];
  const toolApprovals = { sessionAllowed: new Set<string>() };
  const show =
    (kind: Shown['kind']) =>
    async (message: string, ...items: string[]) => {
      shown.push({ kind, message, items });
      return items.includes(options.choose ?? '') ? options.choose : undefined;
    };
  const engine = {
    run: async (run: RunOptions) => {
      runs.push(run);
      return options.result ?? resultWith(null);
    },
  } as unknown as Engine;
  const deps: PersonRunServiceDeps = {
    engine: { get: async () => engine },
    settings: settingsWith(options.settings ?? {}),
    interpreterPath: () => undefined,
    toolApprovals,
    views: {
      present: async () => void views.presented++,
      revealRunsChannel: () => void views.channelReveals++,
    },
    problems: { update: (script, result) => void problems.push({ script, result }) },
    openSetting: async (key) => void openedSettings.push(key),
    window: {
      showInformationMessage: show('information'),
      showWarningMessage: show('warning'),
      showErrorMessage: show('error'),
      showInputBox: async (inputOptions, closeOn) => {
        inputBoxes.push({ options: inputOptions, closeOn });
        return 'typed';
      },
    },
    workspace: {
      isTrusted: () => options.trusted ?? true,
      workspaceFolders: () =>
        (options.folders ?? []).map((folder) => ({ uri: { fsPath: folder } }) as vscode.WorkspaceFolder),
      getWorkspaceFolder: () => undefined,
    },
    commands: {
      executeCommand: async (command, ...args) => void executed.push({ command, args }),
      getCommands: async () => [],
    },
  };
  return {
    service: new PersonRunService(deps),
    shown,
    runs,
    executed,
    openedSettings,
    problems,
    views,
    inputBoxes,
    toolApprovals,
  };
}

/**
 * The follow-ups are not awaited by run() (a notification waits for the person): every stand-in answers at once and
 * the module search reads the disk synchronously, so they are done once the microtasks they queued have run.
 */
const followUpsDone = () => new Promise((resolve) => setImmediate(resolve));

const timeout: Diagnostics = {
  error_type: 'TIMEOUT',
  message: 'The run took longer than 5 s (setting codeMode.run.timeoutSeconds).',
};
const missingModule: Diagnostics = {
  error_type: 'RuntimeError',
  exception: 'ModuleNotFoundError',
  message: "No module named 'yaml'",
};

test('blank code is not run: the person is told there is nothing to run', async () => {
  const { service, shown, runs, views } = personRuns({});
  assert.equal(await service.run({ code: '  \n\t', origin: 'command' }), undefined);
  assert.deepEqual(shown, [{ kind: 'information', message: 'Code Mode: nothing to run.', items: [] }]);
  assert.equal(runs.length, 0);
  assert.equal(views.presented, 0);
});

test("a run gets the person's time limit, their session and backend, and is brought into sight", async () => {
  const { service, runs, views, shown, toolApprovals } = personRuns({ settings: { 'run.timeoutSeconds': 12 } });
  await service.run({ code: 'print(1)', origin: 'explorer' });
  const [run] = runs;
  assert.equal(run?.backend, 'python');
  assert.equal(run?.session, 'interactive');
  assert.equal(run?.origin, 'explorer');
  assert.equal(run?.timeoutS, 12);
  assert.equal(run?.timeoutSource, 'setting codeMode.run.timeoutSeconds');
  assert.equal(run?.toolApprovals, toolApprovals, "the window's tool-approval question");
  assert.equal('echoLastExpression' in run!, false);
  assert.equal(views.presented, 1);
  assert.equal(views.channelReveals, 0);
  await followUpsDone();
  assert.deepEqual(shown, []);
});

test('in Restricted Mode a run chosen for workspace Python goes to Pyodide; same-as-agents follows the default backend', async () => {
  const untrusted = personRuns({ trusted: false, settings: { 'run.backend': 'python' } });
  await untrusted.service.run({ code: 'x = 1', origin: 'command' });
  assert.equal(untrusted.runs[0]?.backend, 'pyodide');
  const sameAsAgents = personRuns({ settings: { 'run.backend': 'same-as-agents', defaultBackend: 'jupyter' } });
  assert.equal(sameAsAgents.service.backend(), 'jupyter');
});

test('codeMode.run.showRunsChannel opens the runs channel; a script run puts its failure in Problems', async () => {
  const result = resultWith({
    error_type: 'RuntimeError',
    exception: 'ZeroDivisionError',
    message: 'division by zero',
  });
  const { service, views, problems, runs } = personRuns({ result, settings: { 'run.showRunsChannel': true } });
  const script = { path: '/work/report.py', firstLine: 1, cwd: '/work' };
  await service.run({ code: '1/0', origin: 'command', script, echoLastExpression: false });
  assert.equal(views.channelReveals, 1);
  assert.deepEqual(problems, [{ script, result }]);
  assert.equal(runs[0]?.echoLastExpression, false);
  await service.run({ code: '1/0', origin: 'command' });
  assert.equal(problems.length, 1, 'a run of no file has no line in Problems');
});

test('per-file sessions: each file its own session, named after it', async () => {
  const { service, runs } = personRuns({ settings: { 'run.session': 'per-file' } });
  const document = (file: string) => ({ uri: { path: file, toString: () => `file://${file}` } }) as vscode.TextDocument;
  await service.run({ code: 'x = 1', origin: 'command', document: document('/a/my report.py') });
  await service.run({ code: 'x = 1', origin: 'command', document: document('/b/my report.py') });
  const [first, second] = runs.map((run) => run.session ?? '');
  assert.match(first!, /^my_report\.py-[0-9a-f]{8}$/);
  assert.match(second!, /^my_report\.py-[0-9a-f]{8}$/);
  assert.notEqual(first, second);
});

test('a run stopped by its time limit offers the setting, and Open Setting opens it', async () => {
  const opened = personRuns({ result: resultWith(timeout), choose: 'Open Setting' });
  await opened.service.run({ code: 'while True: pass', origin: 'command' });
  await followUpsDone();
  assert.deepEqual(opened.shown, [
    { kind: 'warning', message: `Code Mode: ${timeout.message}`, items: ['Open Setting'] },
  ]);
  assert.deepEqual(opened.openedSettings, ['codeMode.run.timeoutSeconds']);

  const dismissed = personRuns({ result: resultWith(timeout) });
  await dismissed.service.run({ code: 'while True: pass', origin: 'command' });
  await followUpsDone();
  assert.equal(dismissed.shown.length, 1);
  assert.deepEqual(dismissed.openedSettings, []);
});

test('a missing module on workspace Python offers its install, which runs Install Packages there', async () => {
  const { service, shown, executed } = personRuns({ result: resultWith(missingModule), choose: 'Install pyyaml' });
  await service.run({ code: 'import yaml', origin: 'command' });
  await followUpsDone();
  assert.deepEqual(shown, [
    {
      kind: 'error',
      message: "Code Mode: No module named 'yaml'. Install pyyaml into python3 on PATH?",
      items: ['Install pyyaml'],
    },
  ]);
  assert.deepEqual(executed, [{ command: 'codeMode.installPackages', args: [['pyyaml'], 'python'] }]);
});

test('no install is offered on Pyodide, nor for a module that is a file of the workspace', async () => {
  const onPyodide = personRuns({ result: resultWith(missingModule), settings: { 'run.backend': 'pyodide' } });
  await onPyodide.service.run({ code: 'import yaml', origin: 'command' });
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-own-module-'));
  try {
    fs.writeFileSync(path.join(folder, 'yaml.py'), 'VALUE = 1\n');
    const ownModule = personRuns({ result: resultWith(missingModule), folders: [folder] });
    await ownModule.service.run({ code: 'import yaml', origin: 'command' });
    await followUpsDone();
    assert.deepEqual(onPyodide.shown, []);
    assert.deepEqual(ownModule.shown, []);
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
});

test('a bad argument is shown as a warning with nothing to choose', async () => {
  const { service, shown } = personRuns({
    result: resultWith({ error_type: 'INVALID_ARGUMENT', message: 'session names are letters and digits' }),
  });
  await service.run({ code: 'x', origin: 'command', session: 'no/such' });
  await followUpsDone();
  assert.deepEqual(shown, [{ kind: 'warning', message: 'Code Mode: session names are letters and digits', items: [] }]);
});

test("input() asks in an input box that stays open, closed when the run stops; a password's answer is hidden", async () => {
  const { service, runs, inputBoxes } = personRuns({});
  await service.run({ code: 'input()', origin: 'command' });
  const stopped = new AbortController();
  const answer = await runs[0]!.onInput!({ prompt: 'Password: ', password: true }, stopped.signal);
  assert.equal(answer, 'typed');
  const [box] = inputBoxes;
  assert.equal(box?.options.title, 'Code Mode: the running code asks for a password');
  assert.equal(box?.options.prompt, 'Password:');
  assert.equal(box?.options.password, true);
  assert.equal(box?.options.ignoreFocusOut, true);
  assert.equal(box?.closeOn, stopped.signal);
  await runs[0]!.onInput!({ prompt: '   ', password: false }, stopped.signal);
  assert.equal(inputBoxes[1]?.options.prompt, 'input()');
  assert.equal(inputBoxes[1]?.options.title, 'Code Mode: the running code asks for input');
});
