import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import type { Diagnostics, Logger } from '../types';
import { readJsonFile, writeJsonAtomic } from './atomicJson';
import { StoreError } from './errors';
import { errorText } from '../errorText';

export type LearningKind = 'error' | 'semantic';

/** What worked before: for a failure (`error`, keyed by a pattern of its message) or for a goal (`semantic`). */
export interface Learning {
  id: string;
  kind: LearningKind;
  error_pattern?: string;
  objective?: string;
  failed_approach?: string;
  successful_approach: string;
  context?: string;
  tags: string[];
  created_at: string;
  /** Times it was attached to a failed run as a hint. */
  use_count: number;
}

/** What a caller gives: a learning before it is stored (no id, date or use count; tags optional). */
export type LearningInput = Omit<Learning, 'id' | 'created_at' | 'use_count' | 'tags'> & { tags?: string[] };

const LEARNINGS_LIMIT = 500;
const MAX_HINTS = 3;
const KEY_MAX_CHARS = 500;
const TEXT_MAX_CHARS = 4000;
const TAGS_MAX = 10;
const TAG = /^[a-z0-9][a-z0-9_.+#-]{0,39}$/;
const STOP_WORDS = new Set([
  'the',
  'an',
  'and',
  'or',
  'to',
  'of',
  'in',
  'on',
  'for',
  'is',
  'it',
  'with',
  'by',
  'be',
  'as',
  'at',
  'from',
  'this',
  'that',
]);

interface StoreFile {
  version: 1;
  learnings: Learning[];
}

/**
 * The learnings of every front door, in one JSON file. Each operation re-reads the file when it changed on disk
 * (the extension and CLI processes may share a storage folder) and writes it back atomically, so concurrent
 * writers lose at most a race, never the file. Bounded: the oldest entries go first.
 */
export class Learnings {
  private cache?: { mtimeMs: number; size: number; learnings: Learning[] };

  constructor(
    readonly file: string,
    private readonly log: Logger,
    private readonly limit = LEARNINGS_LIMIT,
  ) {}

  /** Saves a learning; the same fix for the same pattern or objective refreshes the existing entry instead. */
  add(input: LearningInput): { learning: Learning; updated: boolean } {
    const fields = validate(input);
    const learnings = [...this.load()];
    const key = normalize(fields.error_pattern ?? fields.objective ?? '');
    const index = learnings.findIndex(
      (l) =>
        l.kind === fields.kind &&
        normalize(l.error_pattern ?? l.objective ?? '') === key &&
        normalize(l.successful_approach) === normalize(fields.successful_approach),
    );
    let learning: Learning;
    if (index >= 0) {
      const [existing] = learnings.splice(index, 1);
      // The same lesson learnt again: its fields are refreshed, but it was created when it was first added.
      learning = { ...existing, ...fields, tags: [...new Set([...existing.tags, ...fields.tags])].slice(0, TAGS_MAX) };
    } else {
      learning = { id: randomBytes(4).toString('hex'), ...fields, created_at: new Date().toISOString(), use_count: 0 };
    }
    learnings.push(learning);
    this.save(learnings.slice(-this.limit));
    return { learning, updated: index >= 0 };
  }

  count(): number {
    return this.load().length;
  }

  /**
   * Learnings ranked by how many words of `text` they share — a tag counts most, then the pattern or objective,
   * then the approaches and context. Without text (or with only stop words), the newest first.
   */
  search(text = '', limit = 10): Learning[] {
    const learnings = this.load();
    const query = [...words(text)];
    if (query.length === 0) return learnings.slice().reverse().slice(0, limit);
    const scored: { learning: Learning; score: number; order: number }[] = [];
    learnings.forEach((learning, order) => {
      const tags = new Set(learning.tags.flatMap((t) => [t, ...words(t)]));
      const key = words(`${learning.error_pattern ?? ''} ${learning.objective ?? ''}`);
      const rest = words(`${learning.successful_approach} ${learning.failed_approach ?? ''} ${learning.context ?? ''}`);
      let score = 0;
      for (const word of query)
        score += (has(tags, word) ? 3 : 0) + (has(key, word) ? 2 : 0) + (has(rest, word) ? 1 : 0);
      if (score > 0) scored.push({ learning, score, order });
    });
    scored.sort((a, b) => b.score - a.score || b.learning.use_count - a.learning.use_count || b.order - a.order);
    return scored.slice(0, limit).map((s) => s.learning);
  }

  /**
   * One-line hints from error learnings whose pattern fits a failed run: the pattern appears in the message or
   * traceback (case-insensitive), or most of its words appear in the exception name and message — but then any
   * quoted part of it ('cv2', "price": the specific module, key or name) must appear too, so the fix for one
   * missing module is not offered for another. Best fits first, at most three; each use is counted.
   */
  hintsFor(diagnostics: Diagnostics): string[] {
    const haystack = normalize(`${diagnostics.error_type}\n${diagnostics.message}\n${diagnostics.traceback ?? ''}`);
    const messageWords = words(`${diagnostics.error_type} ${diagnostics.message}`);
    const learnings = this.load();
    const matches: { learning: Learning; score: number }[] = [];
    for (const learning of learnings) {
      if (learning.kind !== 'error' || !learning.error_pattern) continue;
      const pattern = normalize(learning.error_pattern);
      if (haystack.includes(pattern)) {
        // Longer patterns are more specific; any substring match outranks a word overlap.
        matches.push({ learning, score: 2 + Math.min(pattern.length, 500) / 1000 });
        continue;
      }
      const patternWords = words(pattern);
      if (patternWords.size === 0 || !quoted(pattern).every((part) => haystack.includes(part))) continue;
      const shared = [...patternWords].filter((w) => messageWords.has(w)).length;
      const fraction = shared / patternWords.size;
      if ((shared >= 2 && fraction >= 0.5) || fraction === 1) matches.push({ learning, score: fraction });
    }
    matches.sort((a, b) => b.score - a.score || b.learning.use_count - a.learning.use_count);
    const chosen = matches.slice(0, MAX_HINTS).map((m) => m.learning);
    if (chosen.length === 0) return [];
    for (const learning of chosen) learning.use_count += 1;
    try {
      this.save(learnings);
    } catch (error) {
      this.log.warn(`could not record the use of learnings: ${errorText(error)}`);
    }
    return chosen.map(
      (l) => `Past fix for ${oneLine(l.error_pattern ?? '', 120)}: ${oneLine(l.successful_approach, 300)}`,
    );
  }

  private load(): Learning[] {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(this.file);
    } catch {
      stat = undefined;
    }
    if (!stat) {
      this.cache = undefined;
      return [];
    }
    if (this.cache && this.cache.mtimeMs === stat.mtimeMs && this.cache.size === stat.size) return this.cache.learnings;
    const learnings = readJsonFile(this.file, (value) => this.accept(value), this.log) ?? [];
    this.cache = { mtimeMs: stat.mtimeMs, size: stat.size, learnings };
    return learnings;
  }

  private save(learnings: Learning[]): void {
    const data: StoreFile = { version: 1, learnings };
    writeJsonAtomic(this.file, data);
    const stat = fs.statSync(this.file);
    this.cache = { mtimeMs: stat.mtimeMs, size: stat.size, learnings };
  }

  /** The whole file is refused only when it is not a learnings file at all; odd entries are dropped one by one. */
  private accept(value: unknown): Learning[] | undefined {
    if (!isRecord(value) || value.version !== 1 || !Array.isArray(value.learnings)) return undefined;
    const good = value.learnings.filter(isLearning);
    if (good.length < value.learnings.length)
      this.log.warn(`${this.file}: dropped ${value.learnings.length - good.length} malformed learnings`);
    return good;
  }
}

/** Checks a learning as a caller gave it; the message says what to fix. */
function validate(input: LearningInput): Omit<Learning, 'id' | 'created_at' | 'use_count'> {
  if (!isRecord(input)) throw new StoreError('a learning must be an object');
  const { kind } = input;
  if (kind !== 'error' && kind !== 'semantic')
    throw new StoreError('kind must be "error" (a fix for a failure) or "semantic" (how to reach a goal)');
  const text = (name: keyof LearningInput, max: number, required: boolean): string | undefined => {
    const value = input[name];
    if (value !== undefined && value !== null && typeof value !== 'string')
      throw new StoreError(`${name} must be a string`);
    const trimmed = value?.trim() ?? '';
    if (trimmed === '') {
      if (required) throw new StoreError(`a ${kind} learning needs a non-empty ${name}`);
      return undefined;
    }
    if (trimmed.length > max) throw new StoreError(`${name} must be at most ${max} characters`);
    return trimmed;
  };
  if (kind === 'error' && input.objective !== undefined)
    throw new StoreError('objective belongs to kind "semantic"; an error learning has error_pattern');
  if (kind === 'semantic' && input.error_pattern !== undefined)
    throw new StoreError('error_pattern belongs to kind "error"; a semantic learning has objective');
  if (kind === 'semantic' && input.failed_approach !== undefined)
    throw new StoreError('failed_approach belongs to kind "error"');
  const errorPattern = kind === 'error' ? text('error_pattern', KEY_MAX_CHARS, true) : undefined;
  // A one- or two-letter pattern would match nearly every failure.
  if (errorPattern !== undefined && errorPattern.length < 3)
    throw new StoreError('error_pattern must be at least 3 characters, e.g. "ModuleNotFoundError: No module named"');
  const tags = input.tags ?? [];
  if (!Array.isArray(tags) || tags.some((t) => typeof t !== 'string'))
    throw new StoreError('tags must be a list of strings');
  const normalizedTags = [...new Set(tags.map((t) => t.trim().toLowerCase()).filter((t) => t !== ''))];
  if (normalizedTags.length > TAGS_MAX) throw new StoreError(`at most ${TAGS_MAX} tags`);
  const badTag = normalizedTags.find((t) => !TAG.test(t));
  if (badTag !== undefined)
    throw new StoreError(`tag ${JSON.stringify(badTag)} must be 1-40 letters, digits or _.+#- (no spaces)`);
  return dropUndefined({
    kind,
    error_pattern: errorPattern,
    objective: kind === 'semantic' ? text('objective', KEY_MAX_CHARS, true) : undefined,
    failed_approach: kind === 'error' ? text('failed_approach', TEXT_MAX_CHARS, false) : undefined,
    successful_approach: text('successful_approach', TEXT_MAX_CHARS, true) as string,
    context: text('context', TEXT_MAX_CHARS, false),
    tags: normalizedTags,
  });
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isLearning(value: unknown): value is Learning {
  if (!isRecord(value)) return false;
  const optionalString = (v: unknown) => v === undefined || typeof v === 'string';
  return (
    typeof value.id === 'string' &&
    (value.kind === 'error'
      ? typeof value.error_pattern === 'string'
      : value.kind === 'semantic' && typeof value.objective === 'string') &&
    typeof value.successful_approach === 'string' &&
    optionalString(value.failed_approach) &&
    optionalString(value.context) &&
    Array.isArray(value.tags) &&
    value.tags.every((t) => typeof t === 'string') &&
    typeof value.created_at === 'string' &&
    typeof value.use_count === 'number'
  );
}

/** Lowercase with runs of whitespace made one space, for comparing patterns with messages. */
function normalize(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

function quoted(text: string): string[] {
  return [...text.matchAll(/'([^']+)'|"([^"]+)"/g)].map((m) => m[1] ?? m[2]);
}

function words(text: string): Set<string> {
  return new Set((text.toLowerCase().match(/[a-z0-9_]+/g) ?? []).filter((w) => w.length > 1 && !STOP_WORDS.has(w)));
}

/** A query word matches a word it equals or, from three letters on, one it starts (`plot` finds `plotting`). */
function has(set: Set<string>, word: string): boolean {
  if (set.has(word)) return true;
  if (word.length < 3) return false;
  for (const candidate of set) if (candidate.startsWith(word)) return true;
  return false;
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
