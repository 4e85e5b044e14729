// Atomic JSON files, which every store writes through: round trips, missing and corrupt files, failed writes.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readJsonFile, writeJsonAtomic } from '../../src/engine/stores/atomicJson';
import { freshDirs, recordingLogger } from '../support/storeFixtures';

const freshDir = freshDirs();

const anyObject = (value: unknown) => (typeof value === 'object' && value !== null ? value : undefined);

describe('atomic JSON files', () => {
  test('a write round-trips, replaces the old value and leaves no temp file behind', () => {
    const dir = freshDir();
    const file = path.join(dir, 'sub', 'data.json');
    writeJsonAtomic(file, { a: 1 });
    writeJsonAtomic(file, { a: 2, text: 'é\n' });
    assert.deepEqual(readJsonFile(file, anyObject, recordingLogger()), { a: 2, text: 'é\n' });
    assert.deepEqual(fs.readdirSync(path.dirname(file)), ['data.json']);
  });

  test('a missing file reads as undefined without a warning', () => {
    const log = recordingLogger();
    assert.equal(readJsonFile(path.join(freshDir(), 'nope.json'), anyObject, log), undefined);
    assert.deepEqual(log.warnings, []);
  });

  test('a corrupt file is moved aside with a warning, and the next write starts clean', () => {
    const dir = freshDir();
    const file = path.join(dir, 'store.json');
    fs.writeFileSync(file, '{"half": [1, 2');
    const log = recordingLogger();
    assert.equal(readJsonFile(file, anyObject, log), undefined);
    const aside = fs.readdirSync(dir).filter((n) => n.startsWith('store.json.corrupt-'));
    assert.equal(aside.length, 1);
    assert.equal(
      fs.readFileSync(path.join(dir, aside[0]), 'utf8'),
      '{"half": [1, 2',
      'the damaged bytes are kept for a person',
    );
    assert.equal(fs.existsSync(file), false);
    assert.match(log.warnings.join('\n'), /damaged.*moved it aside/);
    writeJsonAtomic(file, { ok: true });
    assert.deepEqual(readJsonFile(file, anyObject, log), { ok: true });
  });

  test('valid JSON of the wrong shape is treated as corrupt', () => {
    const dir = freshDir();
    const file = path.join(dir, 'store.json');
    fs.writeFileSync(file, '[1, 2, 3]');
    const log = recordingLogger();
    assert.equal(
      readJsonFile(file, (v) => (Array.isArray(v) ? undefined : v), log),
      undefined,
    );
    assert.equal(fs.readdirSync(dir).filter((n) => n.startsWith('store.json.corrupt-')).length, 1);
  });

  test('a write that fails part-way keeps the old file and removes its temp file', () => {
    const dir = freshDir();
    const file = path.join(dir, 'store.json');
    writeJsonAtomic(file, { version: 'old' });
    // JSON.stringify throws on a BigInt after the temp file was opened.
    assert.throws(() => writeJsonAtomic(file, { big: 1n }), /BigInt/);
    assert.deepEqual(readJsonFile(file, anyObject, recordingLogger()), { version: 'old' });
    assert.deepEqual(fs.readdirSync(dir), ['store.json']);
  });
});
