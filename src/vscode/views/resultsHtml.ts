// The results webview's HTML document. Pure (plain strings in, a string out) so tests serve the exact
// document VS Code shows, from a local HTTP origin, without a VS Code instance.
import { randomBytes } from 'node:crypto';

export interface ResultsHtmlOptions {
  /** `webview.cspSource`: the origin the webview's own resources are served from. */
  cspSource: string;
  nonce: string;
  /** `webview.asWebviewUri(dist/webview.js)`. */
  scriptUri: string;
  /** `webview.asWebviewUri(media/results.css)`. */
  styleUri: string;
  /** `webview.asWebviewUri(dist/codicons/codicon.css)`: VS Code's icon font, which the buttons use. */
  codiconsUri: string;
  title: string;
}

/** A fresh nonce for every rendered document: 24 random bytes, base64 (valid in a CSP nonce source). */
export function makeNonce(): string {
  return randomBytes(24).toString('base64');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderResultsHtml({
  cspSource,
  nonce,
  scriptUri,
  styleUri,
  codiconsUri,
  title,
}: ResultsHtmlOptions): string {
  // HTML displays (pandas tables) render in `<iframe sandbox="" srcdoc>`. A srcdoc document inherits this
  // policy, so the page styles it with one `<style nonce>` carrying the theme's colours; hence the style nonce.
  // Only the page's own script can write that element: the framed HTML cannot run script (empty sandbox), and
  // its own `<style>`, `<script>` and remote loads stay blocked by the same inherited policy.
  const csp = [
    "default-src 'none'",
    `img-src ${cspSource} data:`,
    // The codicon font, from the extension's own files and nowhere else.
    `font-src ${cspSource}`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    `frame-src ${cspSource} data:`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)};">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeHtml(codiconsUri)}">
<link rel="stylesheet" href="${escapeHtml(styleUri)}">
<title>${escapeHtml(title)}</title>
</head>
<body>
<div id="app"></div>
<script nonce="${escapeHtml(nonce)}" src="${escapeHtml(scriptUri)}"></script>
</body>
</html>
`;
}
