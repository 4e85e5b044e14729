// The run card as an MCP App (ui://code-mode-python/run-card.html, src/mcp/appResource.ts): the host hands over
// run_python's arguments and result, the Results view's own card (webview/cards.ts) renders it, and "Re-run"
// calls run_python again with the same arguments through the host. A .mts file: ext-apps is an ES module only.
import {
  App,
  applyDocumentTheme,
  applyHostStyleVariables,
  type McpUiHostContext,
  type McpUiToolResultNotification,
} from '@modelcontextprotocol/ext-apps';
import type { RunResult } from '../engine/browser.js';
import { RunCardView, type CardHost } from '../webview/cards.js';
import { restyleFrames } from '../webview/displays.js';
import { el } from '../webview/dom.js';
import type { PageToHostMessage } from '../webview/protocol.js';
import { cardOf, runningCardOf, saveImage } from './runModel.mjs';
import './runCard.css';

type ToolResult = McpUiToolResultNotification['params'];

const root = document.getElementById('app')!;
const app = new App({ name: 'code-mode-python-run-card', version: '1.0.0' });
/** The call's arguments, for "Re-run"; a host sends them before the result. */
let args: Record<string, unknown> | undefined;
let shown: RunCardView | undefined;
/** A "Re-run" under way: its Interrupt abandons the call (a host may pass that on to the server as a cancel). */
let rerun: AbortController | undefined;

const host: CardHost = {
  post: (message) => void handle(message),
  scheduleFlush: (card) => requestAnimationFrame(() => card.flush()),
  changed: () => undefined,
};

async function handle(message: PageToHostMessage): Promise<void> {
  if (message.type === 'rerun') await runAgain();
  else if (message.type === 'interrupt') rerun?.abort();
  else if (message.type === 'saveImage') await saveImage(app, message);
  // A traceback's file is on the machine of the server, which a host cannot open: its links do nothing here.
}

function show(result: ToolResult): void {
  const run = result.structuredContent as RunResult | undefined;
  if (!run?.run_id) {
    // A call refused before anything ran has no run to show: its words, as the model read them.
    const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
    return note(text || 'The call returned no run.');
  }
  shown = new RunCardView(cardOf(run, args), host);
  root.replaceChildren(shown.root);
}

function note(text: string): void {
  root.replaceChildren(el('p', { className: 'note app-note', text }));
}

async function runAgain(): Promise<void> {
  if (!args || !shown || rerun) return;
  const previous = shown;
  rerun = new AbortController();
  const running = new RunCardView(runningCardOf(previous.model), host);
  root.replaceChildren(running.root);
  const clock = window.setInterval(() => running.tick(Date.now()), 1000);
  try {
    show(await app.callServerTool({ name: 'run_python', arguments: args }, { signal: rerun.signal }));
  } catch (error) {
    root.replaceChildren(
      previous.root,
      el('p', { className: 'note app-note', text: `Run again did not finish: ${(error as Error).message}` }),
    );
    shown = previous;
  } finally {
    window.clearInterval(clock);
    rerun = undefined;
  }
}

function applyContext(context: McpUiHostContext | undefined): void {
  const theme = context?.theme ?? (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  applyDocumentTheme(theme);
  // The class VS Code puts on a webview's body is what displays.ts reads for the frames of HTML displays.
  document.body.classList.remove('vscode-light', 'vscode-dark');
  document.body.classList.add(`vscode-${theme}`);
  if (context?.styles?.variables) applyHostStyleVariables(context.styles.variables);
  restyleFrames();
}

// Handlers before connect(): the host may send the input and the result as soon as the handshake ends.
app.ontoolinput = (params) => {
  args = params.arguments;
};
app.ontoolresult = show;
app.ontoolcancelled = () => note('The run was cancelled before its result came.');
app.onhostcontextchanged = () => applyContext(app.getHostContext());
applyContext(undefined);
app.connect().then(
  () => applyContext(app.getHostContext()),
  (error: Error) => note(`This view could not reach its host: ${error.message}`),
);
