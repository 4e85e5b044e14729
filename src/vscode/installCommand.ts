import * as vscode from 'vscode';
import type { BackendKind, PackagesResult } from '../engine/types';
import type { EngineHost } from './engineHost';
import { personBackend, personSession } from './personRun';

/**
 * "Install Packages…": names (PEP 508) or .whl paths, where your runs will find them (your backend, your
 * session: Pyodide installs live in a session), with a progress notification. The engine validates every
 * spec before anything is installed.
 */
export async function installPackagesCommand(host: EngineHost, packagesArg?: string[], backendArg?: BackendKind): Promise<PackagesResult | undefined> {
  const settings = host.currentSettings;
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
  const engine = await host.getEngine();
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Code Mode: installing ${packages.join(', ')} on ${backend}…` },
    () => engine.installPackages({ packages, backend, session }),
  );
  const summary = result.packages.map((p) => (p.installed ? `${p.name} ${p.version ?? ''}`.trim() : `${p.requested}: ${p.error ?? 'not installed'}`)).join('; ');
  if (result.success) void vscode.window.showInformationMessage(`Code Mode: installed ${summary}`);
  else void vscode.window.showWarningMessage(`Code Mode: ${result.message || summary}`);
  return result;
}
