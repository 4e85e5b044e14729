// Generate and Run with a scripted language model (test/vscode/fixtures/scripted-model), which stands in for
// Copilot: no Copilot model can sign in on this offline machine. The loop, the runs and the views are real.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { api } from '../extensionApi';
import type { GenerateOutcome } from '../../../src/vscode/generateAndRun';

const untrusted = process.env.CODE_MODE_TEST_EXPECT_TRUSTED === '0';

(untrusted ? describe.skip : describe)('Generate and Run', function () {
  this.timeout(120_000);

  it('feeds a failure back to the model and runs its corrected code', async () => {
    const codeMode = await api();
    await vscode.commands.executeCommand('codeModeTest.scriptModel', [
      'Here you go:\n```python\nvalues = [6, 7]\nprint("product", values[0] * values[2])\n```',
      '```python\nvalues = [6, 7]\nprint("product", values[0] * values[1])\n```',
    ]);
    const outcome = (await vscode.commands.executeCommand('codeMode.generateAndRun', 'multiply six by seven', {
      vendor: 'code-mode-scripted',
    })) as GenerateOutcome;
    assert.equal(outcome.success, true, JSON.stringify(outcome));
    assert.equal(outcome.attempts, 2);
    assert.equal(outcome.result?.stdout, 'product 42\n');

    const requests = (await vscode.commands.executeCommand('codeModeTest.modelRequests')) as string[][];
    assert.equal(requests.length, 2);
    assert.match(requests[0].join('\n'), /Task: multiply six by seven/);
    assert.match(requests[0].join('\n'), /from code_mode import tools/);
    assert.match(requests[1].join('\n'), /IndexError: list index out of range/, 'the error is fed back');

    const attempts = codeMode.history.all().filter((r) => r.run.origin === 'generate');
    assert.deepEqual(
      attempts.slice(-2).map((r) => r.result?.success),
      [false, true],
    );
    const shown = async () => {
      const cards = await codeMode.results.probe();
      return attempts.slice(-2).every((attempt) => cards.some((c) => c.runId === attempt.run.runId));
    };
    const deadline = Date.now() + 20_000;
    while (!(await shown()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    assert.ok(await shown(), 'each attempt shows in the webview');
  });

  it('gives up after the configured attempts', async () => {
    await vscode.commands.executeCommand('codeModeTest.scriptModel', [
      '```python\nraise ValueError("one")\n```',
      '```python\nraise ValueError("two")\n```',
      '```python\nraise ValueError("three")\n```',
    ]);
    const outcome = (await vscode.commands.executeCommand('codeMode.generateAndRun', 'fail forever', {
      vendor: 'code-mode-scripted',
    })) as GenerateOutcome;
    assert.equal(outcome.success, false);
    assert.equal(outcome.attempts, 3);
    assert.match(outcome.message ?? '', /after 3 attempts/);
    // Asked again, the box offers the task that failed: accepting it as it stands runs that task again.
    await vscode.commands.executeCommand('codeModeTest.scriptModel', ['```python\nprint("second try")\n```']);
    const again = vscode.commands.executeCommand('codeMode.generateAndRun', undefined, {
      vendor: 'code-mode-scripted',
    }) as Thenable<GenerateOutcome>;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
    const retried = await again;
    assert.equal(retried.success, true, retried.message);
    assert.equal(retried.result?.stdout, 'second try\n');
  });

  it('says clearly when no language model is available, before asking for a task', async () => {
    const outcome = (await vscode.commands.executeCommand('codeMode.generateAndRun', 'anything', {
      vendor: 'no-such-vendor',
    })) as GenerateOutcome;
    assert.equal(outcome.success, false);
    assert.equal(outcome.attempts, 0);
    assert.match(outcome.message ?? '', /No language model is available/);
    // Without a task argument it would wait in an input box if it asked first; it answers at once instead.
    const unasked = (await vscode.commands.executeCommand('codeMode.generateAndRun', undefined, {
      vendor: 'no-such-vendor',
    })) as GenerateOutcome;
    assert.match(unasked.message ?? '', /No language model is available/);
  });
});
