// The one reach into @renovatebot/pep440's private `lib/specifier` (src/engine/packages/pep440Specifier.ts), through
// the installed package: a release that moves the module, renames `parse` or the groups it fills, or stops
// refusing what PEP 440 refuses, fails here rather than in what the packages tool accepts.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { canonicalSpecifierClause } from '../../src/engine/packages/pep440Specifier';

test('each kind of clause comes back whole and without spaces: version, ".*" prefix, and legacy text after ===', () => {
  assert.equal(canonicalSpecifierClause(' >= 1.26 '), '>=1.26');
  assert.equal(canonicalSpecifierClause('<2'), '<2');
  assert.equal(canonicalSpecifierClause('== 1.1.*'), '==1.1.*');
  assert.equal(canonicalSpecifierClause('!=1.1.3'), '!=1.1.3');
  assert.equal(canonicalSpecifierClause('~=2!1.4.post1'), '~=2!1.4.post1');
  assert.equal(canonicalSpecifierClause('===1.0-weird'), '===1.0-weird');
});

test('what PEP 440 refuses, and anything but exactly one clause, is null', () => {
  for (const clause of [
    '>=1.*',
    '~=1',
    '<1.0+local',
    '==1.0.dev1.*',
    '>=abc',
    '==weird',
    '>=1.0 rm',
    '>=1,<2',
    '',
    'x',
  ])
    assert.equal(canonicalSpecifierClause(clause), null, JSON.stringify(clause));
});
