// Cross-references between settings render as links in the Settings editor and the extension's Features tab only
// when written `#codeMode.x#` inside backticks in a markdown field; elsewhere they show as raw text. Each one must
// also name a setting that exists.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

type Property = Record<string, unknown>;

const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, Property> } | { properties: Record<string, Property> }[] };
};
const sections = [manifest.contributes.configuration].flat();
const properties = Object.assign({}, ...sections.map((section) => section.properties)) as Record<string, Property>;
const MARKDOWN_FIELDS = ['markdownDescription', 'markdownEnumDescriptions', 'markdownDeprecationMessage'];
const REFERENCE = /#codeMode\.[A-Za-z0-9_.]+#/g;

function texts(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [String(value)];
}

test('every reference to another setting is a link: in a markdown field, in backticks, to a setting that exists', () => {
  const problems: string[] = [];
  for (const [name, property] of Object.entries(properties)) {
    for (const [field, value] of Object.entries(property)) {
      for (const text of texts(value)) {
        for (const match of text.matchAll(REFERENCE)) {
          const where = `${name}.${field}: ${match[0]}`;
          if (!MARKDOWN_FIELDS.includes(field)) problems.push(`${where} is in a plain-text field`);
          const before = text[match.index - 1];
          const after = text[match.index + match[0].length];
          if (before !== '`' || after !== '`') problems.push(`${where} is not in backticks`);
          if (!(match[0].slice(1, -1) in properties)) problems.push(`${where} names no setting`);
        }
      }
    }
  }
  assert.ok(Object.keys(properties).length > 10, 'the settings were read');
  assert.deepEqual(problems, []);
});
