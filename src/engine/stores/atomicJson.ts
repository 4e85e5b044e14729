import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from '../types';
import { errorText } from '../errorText';

/**
 * Reads a JSON file kept by writeJsonAtomic. A missing file is `undefined`. A file that does not parse, or whose
 * value `accept` rejects (returns undefined), is moved aside to `<name>.corrupt-<time>` with a warning and also
 * reads as `undefined`: a damaged store costs its contents, never the server, and the bytes stay for a person
 * to look at.
 */
export function readJsonFile<T>(file: string, accept: (value: unknown) => T | undefined, log: Logger): T | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      log.warn(`cannot read ${file}: ${errorText(error)}; starting empty`);
    return undefined;
  }
  let value: T | undefined;
  try {
    value = accept(JSON.parse(text));
  } catch {
    value = undefined;
  }
  if (value === undefined) moveAside(file, log);
  return value;
}

/**
 * Replaces `file` with `value` as JSON so that a reader (another process, or this one after a crash or power
 * loss) sees either the old or the new contents, never a torn write: temp file in the same folder (rename is
 * only atomic within a file system), fsync, rename, then fsync of the folder so the rename itself is durable.
 */
export function writeJsonAtomic(file: string, value: unknown): void {
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Unique per writer, so two processes saving the same store never share a temp file.
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fd = fs.openSync(temp, 'wx', 0o600);
    try {
      fs.writeFileSync(fd, `${JSON.stringify(value, null, 2)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  syncDirectory(dir);
}

function moveAside(file: string, log: Logger): void {
  const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  try {
    fs.renameSync(file, aside);
    log.warn(`${file} was damaged (not the JSON expected); moved it aside to ${aside} and started empty`);
  } catch (error) {
    log.warn(
      `${file} was damaged (not the JSON expected) and could not be moved aside (${errorText(error)}); starting empty`,
    );
  }
}

function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Windows cannot open or fsync a directory; its rename is already durable enough there.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
