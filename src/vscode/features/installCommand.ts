import * as vscode from 'vscode';
import type { Engine, BackendKind, PackagesResult } from '../../engine/index';
import * as commandsApis from '../common/commands.apis';
import { virtualEnvironmentAction } from '../missingModule';
import { personBackend, personSession } from '../services/personRuns';
import type { SettingsService } from '../settings';

export interface InstallCommandDeps {
  settings: Pick<SettingsService, 'current'>;
  engine: () => Promise<Engine>;
  /** Where a failed install's card is (a notification shows only the start of its error). */
  results: { reveal(runId?: string): Promise<void> };
}

export function registerInstallCommand(deps: InstallCommandDeps): vscode.Disposable {
  return vscode.commands.registerCommand('codeMode.installPackages', (packages?: string[], backend?: BackendKind) =>
    installPackagesCommand(deps, packages, backend),
  );
}

/**
 * "Install Packages…": names (PEP 508) or .whl paths, where your runs will find them (your backend, your
 * session: Pyodide installs live in a session), with a progress notification. The engine validates every
 * spec before anything is installed.
 */
async function installPackagesCommand(
  deps: InstallCommandDeps,
  packagesArg?: string[],
  backendArg?: BackendKind,
): Promise<PackagesResult | undefined> {
  const settings = deps.settings.current;
  const backend = backendArg ?? personBackend(settings, vscode.workspace.isTrusted);
  const session = personSession(settings.personRun, vscode.window.activeTextEditor?.document);
  const packages =
    packagesArg ??
    (
      await vscode.window.showInputBox({
        title: `Code Mode: install packages (${backend})`,
        prompt: 'Package names, e.g. "requests==2.32.3 rich", or absolute paths to .whl files, separated by spaces',
        ignoreFocusOut: true,
      })
    )
      ?.split(/\s+/)
      .filter(Boolean);
  if (!packages?.length) return undefined;
  const engine = await deps.engine();
  const result = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Code Mode: installing ${packages.join(', ')} on ${backend}…`,
    },
    () => engine.installPackages({ packages, backend, session, origin: 'command' }),
  );
  const summary = result.packages
    .map((p) => (p.installed ? `${p.name} ${p.version ?? ''}`.trim() : `${p.requested}: ${p.error ?? 'not installed'}`))
    .join('; ');
  if (result.success) {
    void vscode.window.showInformationMessage(`Code Mode: installed ${summary}`);
    return result;
  }
  // The install is a card in the results view and a run in the runs channel, with pip's whole error (it can run
  // to pages); the notification leads with pip's headline.
  const details = 'Show Details';
  // pip will not install into an interpreter the operating system manages (PEP 668): a virtual environment helps.
  const managed = result.packages.some((p) => /externally-managed-environment/.test(p.error ?? ''));
  const environment = managed ? await virtualEnvironmentAction(commandsApis) : undefined;
  void vscode.window
    .showWarningMessage(installFailureText(result), ...(environment ? [environment.title] : []), details)
    .then((choice) => {
      if (choice === details) void deps.results.reveal();
      else if (environment && choice === environment.title)
        void vscode.commands.executeCommand(environment.command, ...environment.args);
    });
  return result;
}

/** A failed install's notification: the first failure's own first line (pip's headline), then what it kept out. */
export function installFailureText(result: PackagesResult): string {
  const failed = result.packages.filter((p) => !p.installed);
  const headline = (failed[0]?.error ?? result.message).split('\n')[0]!.trim();
  const shown = headline.length > 300 ? `${headline.slice(0, 300)}…` : headline;
  const which =
    failed.length === 0
      ? ''
      : failed.length === 1
        ? ` — ${failed[0]!.requested} was not installed`
        : ` — ${failed.length} packages were not installed`;
  return `Code Mode: ${shown}${which}`;
}
