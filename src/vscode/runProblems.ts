// The failing line of your own run, in the editor and the Problems view, until that file runs again.
import * as vscode from 'vscode';
import { failingLineIn, type RunResult, type ScriptRun } from '../engine/index';

export class RunProblems implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('codeMode');

  /** After a run of `script` (a file or lines of it): its error at the failing line, or nothing. */
  update(script: ScriptRun, result: RunResult): void {
    const uri = vscode.Uri.file(script.path);
    const d = result.diagnostics;
    const line = d?.traceback ? failingLineIn(d.traceback, script.path) : undefined;
    if (!d || line === undefined) {
      this.collection.delete(uri);
      return;
    }
    const range = new vscode.Range(line - 1, 0, line - 1, Number.MAX_SAFE_INTEGER);
    const problem = new vscode.Diagnostic(range, d.message, vscode.DiagnosticSeverity.Error);
    problem.source = 'Code Mode';
    if (d.exception) problem.code = d.exception;
    this.collection.set(uri, [problem]);
  }

  dispose(): void {
    this.collection.dispose();
  }
}
