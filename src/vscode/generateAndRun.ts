import * as vscode from 'vscode';
import type { Engine, RunResult, ToolApprovals } from '../engine/index';
import { extractCode } from './generateCode';

export interface GenerateOutcome {
  success: boolean;
  attempts: number;
  code?: string;
  result?: RunResult;
  /** Why nothing ran (no model, no code in the answer, cancelled). */
  message?: string;
}

export interface GenerateDeps {
  engine: () => Promise<Engine>;
  /** `tools.search()` text: what Python may call besides the standard library. */
  toolsSummary: () => Promise<string>;
  log: vscode.LogOutputChannel;
  /** The window's tool-approval question: generated code is a model's, so its tool calls follow the policy. */
  toolApprovals: ToolApprovals;
}

export const NO_MODEL_MESSAGE =
  'No language model is available. Sign in to GitHub Copilot (or install a language model provider) and try again.';

/** The model to ask: by default Copilot's when there are any, else any model; undefined when there is none. */
export async function pickModel(
  selector?: vscode.LanguageModelChatSelector,
): Promise<vscode.LanguageModelChat | undefined> {
  const [model] = selector
    ? await vscode.lm.selectChatModels(selector)
    : [...(await vscode.lm.selectChatModels({ vendor: 'copilot' })), ...(await vscode.lm.selectChatModels())];
  return model;
}

function failureReport(result: RunResult): string {
  const d = result.diagnostics;
  const parts = [`It failed with ${d?.error_type}: ${d?.message}`];
  if (d?.traceback) parts.push(`Traceback:\n${d.traceback}`);
  if (result.stderr) parts.push(`stderr:\n${result.stderr.slice(-2000)}`);
  if (result.stdout) parts.push(`stdout:\n${result.stdout.slice(-2000)}`);
  parts.push('Reply with the corrected complete program in one ```python block.');
  return parts.join('\n\n');
}

/**
 * The seeds' code-generation agent: ask a language model for Python that does the task, run it, and on
 * failure feed the error back, up to `maxAttempts` times. Every attempt is an ordinary run, so it shows in
 * the output channel, the results view and the history.
 */
export async function generateAndRun(
  task: string,
  model: vscode.LanguageModelChat,
  maxAttempts: number,
  deps: GenerateDeps,
  token: vscode.CancellationToken,
): Promise<GenerateOutcome> {
  deps.log.info(`generate and run with ${model.vendor}/${model.id}: ${task}`);
  const engine = await deps.engine();
  const messages = [
    vscode.LanguageModelChatMessage.User(
      [
        'Write a complete Python 3 program that does the task below. It runs in a persistent session; print the results the person should see.',
        'Besides the standard library, it may call these tools (import with `from code_mode import tools`):',
        await deps.toolsSummary(),
        'Answer with the program in one ```python block and nothing else.',
        `Task: ${task}`,
      ].join('\n\n'),
    ),
  ];
  let last: GenerateOutcome = { success: false, attempts: 0 };
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    if (token.isCancellationRequested) return { ...last, message: 'Cancelled.' };
    const response = await model.sendRequest(messages, {}, token);
    let answer = '';
    for await (const chunk of response.text) answer += chunk;
    const code = extractCode(answer);
    if (!code) {
      messages.push(
        vscode.LanguageModelChatMessage.Assistant(answer),
        vscode.LanguageModelChatMessage.User(
          'That had no ```python block. Reply with the program in one ```python block.',
        ),
      );
      last = { success: false, attempts: attempt, message: 'The model answered without code.' };
      continue;
    }
    const result = await engine.run({ code, origin: 'generate', toolApprovals: deps.toolApprovals });
    last = { success: result.success, attempts: attempt, code, result };
    if (result.success) return last;
    messages.push(
      vscode.LanguageModelChatMessage.Assistant(answer),
      vscode.LanguageModelChatMessage.User(failureReport(result)),
    );
  }
  return { ...last, message: last.message ?? `Still failing after ${maxAttempts} attempts.` };
}
