import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { StoreError } from './errors';

const CODE_FILE_MAX_BYTES = 1024 * 1024;
const CODE_FILE_EXTENSIONS: readonly string[] = ['.py', '.txt', '.json', '.csv', '.md'];
const NAME_MAX_CHARS = 128;
// Names that Windows reserves for devices, with or without an extension.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/i;

// Absent on Windows, where lstat and the regular-file checks below are the guard.
const O_NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;
// A FIFO planted under a valid name must not block the server on open.
const O_NONBLOCK = fs.constants.O_NONBLOCK ?? 0;

export type CodeFileMode = 'create' | 'append';

export interface CodeFileInfo {
  name: string;
  size: number;
  /** ISO time of the last change. */
  mtime: string;
}

/** Why `name` cannot name a code file, in words for the caller; undefined when it can. */
export function codeFileNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || name.length === 0)
    return 'filename must be a non-empty plain file name such as "analysis.py"';
  const shown = JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
  if (name.includes('\0')) return `filename ${shown} contains a NUL character`;
  if (name.includes('/') || name.includes('\\') || path.isAbsolute(name)) {
    return `filename ${shown} must be a plain name without folders or path separators, such as "analysis.py"`;
  }
  if (name.includes('..')) return `filename ${shown} must not contain ".."`;
  if (name.startsWith('.')) return `filename ${shown} must not start with "."`;
  if (name.length > NAME_MAX_CHARS) return `filename must be at most ${NAME_MAX_CHARS} characters`;
  if (!/^[A-Za-z0-9._-]+$/.test(name)) return `filename ${shown} may use only letters, digits, ".", "_" and "-"`;
  if (!CODE_FILE_EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext))) {
    return `filename ${shown} must end in one of ${CODE_FILE_EXTENSIONS.join(', ')}`;
  }
  if (WINDOWS_DEVICE.test(name)) return `filename ${shown} is a reserved device name on Windows`;
  return undefined;
}

/**
 * A flat folder of text files a model builds over several calls (write, append) and then runs. Every name is
 * checked before it touches the file system, and an entry that is not a plain regular file with one link
 * (a planted symlink, hard link, folder or FIFO) is refused rather than followed, so a call can neither reach
 * nor change anything outside the folder.
 */
export class CodeFiles {
  /** Operations run one at a time so a size check and the write it guards cannot interleave with another. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dir: string,
    private readonly maxBytes = CODE_FILE_MAX_BYTES,
  ) {}

  /** The absolute path of a valid name (the file need not exist). */
  path(filename: string): string {
    const problem = codeFileNameProblem(filename);
    if (problem) throw new StoreError(problem);
    return path.join(this.dir, filename);
  }

  /** `create` makes or replaces the file; `append` adds to its end, making it if missing. */
  write(
    filename: string,
    content: string,
    mode: CodeFileMode = 'create',
  ): Promise<CodeFileInfo & { bytes_written: number }> {
    return this.serial(async () => {
      const file = this.path(filename);
      if (typeof content !== 'string') throw new StoreError('content must be a string');
      if (mode !== 'create' && mode !== 'append') throw new StoreError('mode must be "create" or "append"');
      const bytes = Buffer.byteLength(content, 'utf8');
      if (bytes > this.maxBytes) throw new StoreError(`content is ${bytes} bytes; ${this.limitText()}`);
      await this.ensureDir();
      await this.regularOrMissing(filename, file);
      if (mode === 'create') await this.replace(file, content);
      else await this.append(filename, file, content, bytes);
      return { ...(await this.info(filename, file)), bytes_written: bytes };
    });
  }

  read(filename: string): Promise<CodeFileInfo & { content: string }> {
    return this.serial(async () => {
      const file = this.path(filename);
      if (!(await this.regularOrMissing(filename, file))) {
        const names = (await this.listNow()).map((f) => f.name);
        const known =
          names.length === 0
            ? 'there are no code files yet'
            : `the code files are: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''}`;
        throw new StoreError(`no code file named "${filename}" (${known}); write it with code_file first`);
      }
      const handle = await this.openChecked(filename, file, fs.constants.O_RDONLY);
      try {
        const stat = await handle.stat();
        if (stat.size > this.maxBytes) throw new StoreError(`"${filename}" is ${stat.size} bytes; ${this.limitText()}`);
        const content = await handle.readFile('utf8');
        return { name: filename, size: stat.size, mtime: stat.mtime.toISOString(), content };
      } finally {
        await handle.close();
      }
    });
  }

  /** Valid code files only, by name. */
  list(): Promise<CodeFileInfo[]> {
    return this.serial(() => this.listNow());
  }

  private async listNow(): Promise<CodeFileInfo[]> {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(this.dir, { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const files: CodeFileInfo[] = [];
    for (const entry of entries) {
      if (!entry.isFile() || codeFileNameProblem(entry.name)) continue;
      try {
        files.push(await this.info(entry.name, path.join(this.dir, entry.name)));
      } catch {
        // Deleted between readdir and lstat: it is simply not there any more.
      }
    }
    return files.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const turn = this.queue.then(operation);
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  private async ensureDir(): Promise<void> {
    await fs.promises.mkdir(this.dir, { recursive: true, mode: 0o700 });
    const stat = await fs.promises.lstat(this.dir);
    if (!stat.isDirectory())
      throw new Error(
        `${this.dir} is not a plain folder (a symbolic link or a file); refusing to store code files there`,
      );
  }

  /** True when a regular file is there, false when nothing is; anything else is refused. */
  private async regularOrMissing(filename: string, file: string): Promise<boolean> {
    let stat: fs.Stats;
    try {
      stat = await fs.promises.lstat(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
    if (stat.isSymbolicLink())
      throw new StoreError(
        `"${filename}" is a symbolic link in the code-files folder; refusing to follow it (delete it by hand)`,
      );
    if (!stat.isFile())
      throw new StoreError(`"${filename}" in the code-files folder is not a regular file; refusing to use it`);
    if (stat.nlink > 1)
      throw new StoreError(`"${filename}" in the code-files folder is a hard link to another file; refusing to use it`);
    return true;
  }

  /**
   * Opens without following a symlink at the last component, then re-checks what was opened: the lstat
   * before it could have been raced by someone swapping the entry.
   */
  private async openChecked(filename: string, file: string, flags: number): Promise<fs.promises.FileHandle> {
    let handle: fs.promises.FileHandle;
    try {
      handle = await fs.promises.open(file, flags | O_NOFOLLOW | O_NONBLOCK, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ELOOP on Linux and macOS, EMLINK on FreeBSD: the entry became a symlink.
      if (code === 'ELOOP' || code === 'EMLINK')
        throw new StoreError(`"${filename}" is a symbolic link in the code-files folder; refusing to follow it`);
      if (code === 'ENXIO')
        throw new StoreError(`"${filename}" in the code-files folder is not a regular file; refusing to use it`);
      throw error;
    }
    const stat = await handle.stat();
    if (!stat.isFile() || stat.nlink > 1) {
      await handle.close();
      throw new StoreError(`"${filename}" in the code-files folder is not a plain regular file; refusing to use it`);
    }
    return handle;
  }

  /** Temp file and rename: a reader sees the old or the new content, and a symlink swapped in is replaced, not followed. */
  private async replace(file: string, content: string): Promise<void> {
    const temp = path.join(this.dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      const handle = await fs.promises.open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(content, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      await fs.promises.rename(temp, file);
    } catch (error) {
      await fs.promises.rm(temp, { force: true });
      throw error;
    }
  }

  private async append(filename: string, file: string, content: string, bytes: number): Promise<void> {
    const { O_WRONLY, O_APPEND, O_CREAT } = fs.constants;
    const handle = await this.openChecked(filename, file, O_WRONLY | O_APPEND | O_CREAT);
    try {
      const { size } = await handle.stat();
      if (size + bytes > this.maxBytes) {
        throw new StoreError(
          `appending ${bytes} bytes would make "${filename}" ${size + bytes} bytes; ${this.limitText()}`,
        );
      }
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  private async info(name: string, file: string): Promise<CodeFileInfo> {
    const stat = await fs.promises.lstat(file);
    return { name, size: stat.size, mtime: stat.mtime.toISOString() };
  }

  private limitText(): string {
    return `a code file holds at most ${this.maxBytes} bytes (${Math.round((this.maxBytes / 1024 / 1024) * 10) / 10} MB)`;
  }
}
