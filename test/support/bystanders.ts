// What every escape attempt must leave untouched, checked the same way against the CLI's engine (test/sandbox/)
// and the extension's (test/vscode/): a process outside the sandbox, and another session's state.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Run } from './pyodideProbe';

export class Bystanders {
  /** A process of the same user outside the sandbox, for attacks to try to signal. */
  readonly witness: ChildProcess = spawn('sleep', ['1000'], { stdio: 'ignore' });

  constructor(private readonly bystander: Run) {}

  /** Gives the other session the state that must survive. */
  async settle(): Promise<void> {
    const kept = await this.bystander('kept = "bystander state"');
    assert.equal(kept.success, true, JSON.stringify(kept.diagnostics));
  }

  async assertUnharmed(): Promise<void> {
    assert.equal(this.witness.exitCode, null, 'the witness process outside the sandbox was killed');
    assert.equal(this.witness.signalCode, null, 'the witness process outside the sandbox was signalled');
    const other = await this.bystander('print(kept)');
    assert.equal(
      other.stdout,
      'bystander state\n',
      `another session lost its state: ${JSON.stringify(other.diagnostics)}`,
    );
  }

  dispose(): void {
    this.witness.kill('SIGKILL');
  }
}
