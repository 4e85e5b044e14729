// Generate and Run as a person meets it: no question is asked before a model is known to be there, and a
// task typed for a run that failed is offered again instead of being lost.
import * as vscode from 'vscode';
import {
  generateAndRun,
  NO_MODEL_MESSAGE,
  pickModel,
  type GenerateDeps,
  type GenerateOutcome,
} from '../generateAndRun';
import type { ResultsPresenter } from './runCommands';

export function registerGenerateCommand(deps: GenerateDeps, results: ResultsPresenter): vscode.Disposable {
  let unfinishedTask = '';
  return vscode.commands.registerCommand(
    'codeMode.generateAndRun',
    async (taskArg?: string, options?: { vendor?: string }): Promise<GenerateOutcome | undefined> => {
      const model = await pickModel(options?.vendor ? { vendor: options.vendor } : undefined);
      if (!model) {
        void vscode.window.showWarningMessage(`Code Mode: ${NO_MODEL_MESSAGE}`);
        return { success: false, attempts: 0, message: NO_MODEL_MESSAGE };
      }
      const task =
        taskArg ??
        (await vscode.window.showInputBox({
          title: 'Code Mode: Generate and Run',
          prompt: 'What should the Python code do?',
          value: unfinishedTask,
          ignoreFocusOut: true,
        }));
      if (!task?.trim()) return undefined;
      results.reveal();
      const maxAttempts = vscode.workspace.getConfiguration('codeMode').get<number>('generate.maxAttempts', 3);
      const outcome = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: 'Code Mode: generating and running…',
          cancellable: true,
        },
        (_progress, token) => generateAndRun(task, model, maxAttempts, deps, token),
      );
      unfinishedTask = outcome.success ? '' : task;
      if (!outcome.success)
        void vscode.window.showWarningMessage(`Code Mode: ${outcome.message ?? 'the generated code failed.'}`);
      return outcome;
    },
  );
}
