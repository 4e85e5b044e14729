// A run's HTML for the results view's sandboxed frame (src/webview/frameMarkup.ts): styles kept under the page's
// nonce-only CSP, what the CSP would refuse left out, read as text.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { frameMarkup } from '../../src/webview/frameMarkup';

test('style elements get the nonce, style attributes become nonced rules, handlers and scripts go', () => {
  const html =
    '<style type="text/css">#T_1 td { color: red; }</style>' +
    '<table id="T_1"><tr><td style="background-color: #ff0000; font-weight: bold" onclick="alert(1)">a < b</td>' +
    '<td style=\'font-family: "Fira Code"\'>x</td><td style="color: x} body{display:none">y</td></tr></table>' +
    '<script>alert(1)</script><link rel="stylesheet" href="https://example.com/a.css"><!-- kept -->' +
    '<style nonce="guessed">p{}</style>';
  assert.equal(
    frameMarkup(html, 'N'),
    '<style nonce="N">' +
      '[data-cm-style="0"][data-cm-style="0"][data-cm-style="0"]{background-color: #ff0000; font-weight: bold}\n' +
      '[data-cm-style="1"][data-cm-style="1"][data-cm-style="1"]{font-family: "Fira Code"}</style>' +
      '<style type="text/css" nonce="N">#T_1 td { color: red; }</style>' +
      '<table id="T_1"><tr><td data-cm-style="0">a &lt; b</td><td data-cm-style="1">x</td><td>y</td></tr></table>' +
      '<!-- kept --><style nonce="N">p{}</style>',
  );
});

test('markup without styles passes as it came', () => {
  const html = '<div><table border="1" class="dataframe"><tr><th>0</th><td>Lisbon</td></tr></table></div>';
  assert.equal(frameMarkup(html, 'N'), html);
});
