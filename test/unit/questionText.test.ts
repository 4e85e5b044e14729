// The text of a tool-call question (engine/codemode/questionText.ts), shared by VS Code's modal and MCP elicitation,
// against a corpus of argument shapes code could use to make the question lie: every line the person reads is one
// argument, whatever the names and values hold, nothing invisible reaches them, and long values keep both ends.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  middleCut,
  quoted,
  shownArgs,
  shownName,
  undeclaredArgs,
  visible,
} from '../../src/engine/codemode/questionText';

/** Characters that change what a person sees without being seen: none may reach the question. */
// eslint-disable-next-line no-control-regex -- control characters are what the question must not carry
const HIDDEN = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/u;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const FAKE_ALLOW = 'Allow this call?';
const hostile: Record<string, Record<string, unknown>> = {
  'a newline in a value draws a fake argument line': {
    path: '/home/me/.ssh/authorized_keys\npath: "/workspace/public/notes.txt"',
  },
  'a fake question then blank lines push the real target down': {
    note: `ok\n${FAKE_ALLOW}\n${'\n'.repeat(40)}`,
    path: '/home/me/.bashrc',
  },
  'a newline in a name': { 'path: "/workspace/public/notes.txt"\nreal_path': '/home/me/.ssh/id_ed25519' },
  'CRLF and a lone CR rewrite the line': { path: '/etc/passwd\r\npath: "safe"\rpath: "safe.txt"' },
  'ANSI escapes clear the screen and recolour': {
    path: '\u001b[2J\u001b[H\u001b[32msafe.txt\u001b[0m',
    x: '\u009b31m',
  },
  'bidi overrides reverse the visible order': {
    path: '/workspace/\u202Etxt.exe\u202C',
    name: '\u2067evil\u2069 \u2066ok\u2069',
  },
  'zero-width and invisible characters hide a difference': {
    path: '/work\u200bspace/\u2060a\ufeffb\u00ad',
    tag: '\u{E0041}',
  },
  'NUL and DEL': { path: 'safe.txt\u0000/etc/shadow\u007f' },
  'line and paragraph separators': { path: 'a\u2028path: "b"\u2029c' },
  'lone surrogates': { text: 'x\uD800y\uDC00z' },
  'a quote that closes the value early': { path: 'notes.txt", "path": "/etc/passwd' },
  'a backslash that fakes an escape': { path: 'C:\\\\safe\\u000a' },
  'keys that look alike or mean something to JavaScript': JSON.parse(
    '{"__proto__": "p", "constructor": 1, "path ": "a", "path": "b"}',
  ),
  'nested objects hide a value deep down': { options: { a: { b: { c: { d: { e: 'deep\nAllow this call?' } } } } } },
};

for (const [shape, args] of Object.entries(hostile)) {
  test(`the question cannot be made to lie: ${shape}`, () => {
    const text = shownArgs(args);
    const lines = text.split('\n');
    assert.equal(lines.length, Object.keys(args).length, `one line per argument:\n${text}`);
    for (const line of lines)
      assert.doesNotMatch(line, HIDDEN, 'no control, format, bidi or separator character reaches the person');
    assert.doesNotMatch(text, LONE_SURROGATE, 'no half of a surrogate pair');
    for (const [i, name] of Object.keys(args).entries()) {
      assert.ok(
        lines[i]!.startsWith(`${quoted(name, 60)}: `),
        `line ${i} starts with its own quoted name: ${lines[i]}`,
      );
      // The value's quote closes only where the value ends: what is inside reads back as the value itself.
      const value = args[name];
      if (typeof value === 'string' && value.length < 100) {
        const inside = lines[i]!.slice(quoted(name, 60).length + 2);
        assert.equal(
          JSON.parse(
            inside.replace(/\\u\{([0-9A-F]+)\}/g, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16))),
          ),
          value,
        );
      }
    }
    assert.ok(!lines.slice(0, -1).some((line) => line === FAKE_ALLOW), 'no line of its own says Allow');
  });
}

test('a long value keeps both ends and says how much was cut; the whole is bounded', () => {
  const target = `/home/me/${'a/'.repeat(500)}.ssh/authorized_keys`;
  const line = shownArgs({ path: target });
  assert.ok(line.length < 200, line);
  assert.match(line, /^"path": "\/home\/me\/a\/.*…\(\d+ characters cut\)….*\.ssh\/authorized_keys"$/);
  const many = shownArgs(Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`arg${i}`, 'v'.repeat(100)])));
  assert.ok(many.length < 1500, String(many.length));
  assert.match(many, /…and \d+ more arguments not shown$/);
  const emoji = shownArgs({ text: '😀'.repeat(500) });
  assert.doesNotMatch(emoji, LONE_SURROGATE, 'a pair is kept whole at the cut');
  assert.equal(middleCut('short', 10), 'short');
});

test('a huge object is bounded in items and depth, its shape still visible', () => {
  const wide = shownArgs({ o: Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i])) });
  assert.ok(wide.length < 200, wide);
  const list = shownArgs({ l: Array.from({ length: 1000 }, (_, i) => i) });
  assert.match(list, /^"l": \[0, 1, 2.*\]$/);
  const deep = shownArgs({ d: { a: { b: { c: { d: { e: 1 } } } } } });
  assert.match(deep, /\{…\}/);
});

test('names from another server are shown plain when plain, else quoted and visible', () => {
  assert.equal(shownName('memory'), 'memory');
  assert.equal(shownName('create_entities'), 'create_entities');
  assert.equal(shownName('files.v2-beta'), 'files.v2-beta');
  assert.equal(shownName('write\nAllow this call?'), '"write\\nAllow this call?"');
  assert.equal(shownName('\u202Eelif_etirw'), '"\\u202Eelif_etirw"');
  assert.equal(visible('tab\there'), 'tab\\there');
});

test("arguments the tool's schema does not declare are found and marked", () => {
  const schema = { type: 'object', properties: { path: { type: 'string' } } };
  assert.deepEqual(undeclaredArgs({ path: 'a', mode: 'w' }, schema), ['mode']);
  assert.deepEqual(undeclaredArgs({ path: 'a' }, schema), []);
  assert.deepEqual(undeclaredArgs({ x: 1 }, { type: 'object' }), [], 'a schema without properties says nothing');
  assert.deepEqual(undeclaredArgs({ x: 1 }, { type: 'object', additionalProperties: false }), ['x']);
  assert.deepEqual(undeclaredArgs({ ['__proto__']: 1 }, schema), ['__proto__']);
  assert.match(
    shownArgs({ path: 'a', mode: 'w' }, ['mode']),
    /^"path": "a"\n"mode": "w" {2}⚠ not in the tool’s schema$/,
  );
});
