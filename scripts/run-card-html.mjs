// The run card MCP App (src/app/) as ONE HTML document, dist/run-card.html: an App's resource is a single document
// that loads nothing from outside, so its script and stylesheet are written into it. Its CSP admits exactly that
// script (by hash), inline styles (the frames of HTML displays carry their own <style>) and data: images.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** An esbuild plugin for a build with `write: false` whose outputs are one .js and one .css. */
export function runCardHtml(outfile) {
  return {
    name: 'run-card-html',
    setup(build) {
      build.onEnd((result) => {
        if (result.errors.length) return;
        const text = (ext) => result.outputFiles.find((file) => file.path.endsWith(ext)).text;
        fs.mkdirSync(path.dirname(outfile), { recursive: true });
        fs.writeFileSync(outfile, runCardDocument(text('.js'), text('.css')));
      });
    },
  };
}

/**
 * zod's `locales` namespace (every language's error messages, a third of the card) reduced to English, the one
 * zod configures itself with: nothing in the card or the SDK picks another language.
 */
export const englishZodOnly = {
  name: 'english-zod-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/]/.test(args.importer)
        ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-en' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: path.dirname(args.path),
    }));
  },
};

function runCardDocument(js, css) {
  // Either would end its element early and leave the rest to be read as markup.
  if (/<\/script/i.test(js) || /<\/style/i.test(css)) throw new Error('run card: a closing tag inside inline code');
  const scriptHash = createHash('sha256').update(js).digest('base64');
  const csp = ["default-src 'none'", `script-src 'sha256-${scriptHash}'`, "style-src 'unsafe-inline'", 'img-src data:'];
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp.join('; ')}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Python run</title>
<style>${css}</style>
</head>
<body>
<main id="app"><p class="note app-note">Waiting for the run…</p></main>
<script>${js}</script>
</body>
</html>
`;
}
