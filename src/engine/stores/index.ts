import * as path from 'node:path';
import type { HistoryPersistence, SavedRun } from '../history';
import type { Logger } from '../types';
import { readJsonFile, writeJsonAtomic } from './atomicJson';
import { CodeFiles } from './codeFiles';
import { Learnings } from './learnings';
import { errorText } from '../errorText';

export { CodeFiles, codeFileNameProblem } from './codeFiles';
export { Learnings, type Learning } from './learnings';
export { StoreError } from './errors';

/** What persists in the storage folder besides caches. */
export interface Stores {
  codeFiles: CodeFiles;
  learnings: Learnings;
  /** For a RunHistory that should survive restarts: `new RunHistory(limit, stores.history)`. */
  history: HistoryPersistence;
}

/** The stores under `storageDir`; nothing touches the disk until first use. */
export function createStores(storageDir: string, log: Logger): Stores {
  const dir = path.resolve(storageDir);
  return {
    codeFiles: new CodeFiles(path.join(dir, 'code-files')),
    learnings: new Learnings(path.join(dir, 'learnings.json'), log),
    history: historyFile(path.join(dir, 'history.json'), log),
  };
}

/** Run history as `{version: 1, runs}` JSON, written atomically; a save that fails is logged, not thrown. */
export function historyFile(file: string, log: Logger): HistoryPersistence {
  return {
    load: () =>
      readJsonFile(
        file,
        (value) => {
          const data = value as { version?: unknown; runs?: unknown } | null;
          if (typeof data !== 'object' || data === null || data.version !== 1 || !Array.isArray(data.runs))
            return undefined;
          return data.runs.filter(isSavedRun);
        },
        log,
      ) ?? [],
    save: (runs) => {
      try {
        writeJsonAtomic(file, { version: 1, runs });
      } catch (error) {
        log.warn(`could not save the run history to ${file}: ${errorText(error)}`);
      }
    },
  };
}

function isSavedRun(value: unknown): value is SavedRun {
  const saved = value as { run?: Record<string, unknown>; result?: Record<string, unknown> } | null;
  const run = saved?.run;
  const result = saved?.result;
  return (
    typeof run === 'object' &&
    run !== null &&
    typeof run.runId === 'string' &&
    typeof run.code === 'string' &&
    typeof run.session === 'string' &&
    typeof run.backend === 'string' &&
    typeof result === 'object' &&
    result !== null &&
    typeof result.success === 'boolean' &&
    typeof result.stdout === 'string' &&
    typeof result.stderr === 'string'
  );
}
