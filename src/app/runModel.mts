// What the run card app gives the Results view's card: a finished run_python call as the card's model, the
// card of its "Re-run" while it runs, and a figure's Save through the host.
import type { App } from '@modelcontextprotocol/ext-apps';
import type { RunResult } from '../engine/browser.js';
import { el } from '../webview/dom.js';
import { SAVABLE_IMAGES, type PageToHostMessage, type RunCard } from '../webview/protocol.js';

/** `args`: the call's arguments, whose code the card shows (a code file's run shows the file's name). */
export function cardOf(result: RunResult, args: Record<string, unknown> | undefined): RunCard {
  const code = typeof args?.code === 'string' ? args.code : typeof args?.file === 'string' ? `# ${args.file}` : '';
  return {
    run: {
      runId: result.run_id,
      session: result.session,
      backend: result.backend,
      code,
      origin: 'mcp',
      tool: 'run_python',
      // The result says how long it took, not when: near enough for the card's clock.
      startedAt: Date.now() - result.duration_ms,
    },
    stdout: result.stdout,
    stderr: result.stderr,
    displays: result.displays ?? [],
    result,
  };
}

/** The same code and session, started now and without a result yet: the card shows it running. */
export function runningCardOf(previous: RunCard): RunCard {
  return { run: { ...previous.run, runId: '', startedAt: Date.now() }, stdout: '', stderr: '', displays: [] };
}

type SaveMessage = Extract<PageToHostMessage, { type: 'saveImage' }>;

/** The host's download when it offers one (a sandboxed frame may not download itself), else a download link. */
export async function saveImage(app: App, { mime, data, title }: SaveMessage): Promise<void> {
  const name = `${(title || 'figure').replace(/[^\w.-]+/g, '_')}.${SAVABLE_IMAGES[mime]}`;
  // SVG comes as markup or as base64; every other image as base64.
  const markup = mime === 'image/svg+xml' && data.trimStart().startsWith('<');
  if (app.getHostCapabilities()?.downloadFile) {
    const resource = { uri: `file:///${name}`, mimeType: mime, ...(markup ? { text: data } : { blob: data }) };
    await app.downloadFile({ contents: [{ type: 'resource', resource }] });
    return;
  }
  const href = markup ? `data:${mime};charset=utf-8,${encodeURIComponent(data)}` : `data:${mime};base64,${data}`;
  el('a', { attrs: { href, download: name } }).click();
}
