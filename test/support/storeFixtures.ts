// What the unit tests of the persistent stores (test/unit/: atomic JSON, code files, learnings, run history) share:
// an empty folder of its own for each test, and a logger that keeps the warnings a store gives.
import { after, before } from 'node:test';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from '../../src/engine/types';

/**
 * Makes a temporary folder before the calling file's tests and removes it, and all in it, after them. Returns a
 * function that makes a new empty folder in it, one for each test.
 */
export function freshDirs(): () => string {
  let root: string;
  let dirCounter = 0;
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-stores-'));
  });
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });
  return () => {
    const dir = path.join(root, `t${++dirCounter}`);
    fs.mkdirSync(dir);
    return dir;
  };
}

/** A logger that keeps its warnings and errors for a test to read. */
export function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
}
