import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorText } from '../errorText';

export type ServerConfig =
  | {
      name: string;
      source: string;
      transport: 'stdio';
      command: string;
      args: string[];
      env: Record<string, string>;
      cwd?: string;
      description?: string;
    }
  | {
      name: string;
      source: string;
      transport: 'http';
      url: string;
      headers: Record<string, string>;
      description?: string;
    };

export interface ConfigProblem {
  source: string;
  server?: string;
  message: string;
}

export interface ParsedServers {
  servers: ServerConfig[];
  problems: ConfigProblem[];
}

export interface ParseContext {
  /** Where the config came from, for messages ("mcp_servers.json", "setting codeMode.mcpServers"). */
  source: string;
  workspaceFolder?: string;
  env?: NodeJS.ProcessEnv;
}

const SERVER_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** VS Code's ${workspaceFolder} and ${env:NAME}; ${input:...} prompts cannot be answered here. */
function substitute(value: string, ctx: ParseContext): string {
  return value.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    if (name === 'workspaceFolder' && ctx.workspaceFolder) return ctx.workspaceFolder;
    if (name === 'userHome') return process.env.HOME ?? whole;
    if (name.startsWith('env:')) return (ctx.env ?? process.env)[name.slice(4)] ?? '';
    throw new Error(`unsupported variable ${whole}`);
  });
}

function stringRecord(value: unknown, field: string, ctx: ParseContext): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value)) throw new Error(`"${field}" must be an object of strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
      throw new Error(`"${field}.${k}" must be a string`);
    out[k] = substitute(String(v), ctx);
  }
  return out;
}

function parseOne(name: string, raw: unknown, ctx: ParseContext): ServerConfig {
  if (!SERVER_NAME.test(name)) throw new Error('the server name must be 1-64 letters, digits, "_", "-" or "."');
  if (!isRecord(raw)) throw new Error('each server must be an object');
  const description = typeof raw.description === 'string' ? raw.description : undefined;
  const type = raw.type ?? (raw.url !== undefined ? 'http' : 'stdio');
  if (type === 'http' || type === 'sse') {
    if (typeof raw.url !== 'string' || !/^https?:\/\//.test(raw.url)) throw new Error('"url" must be an http(s) URL');
    return {
      name,
      source: ctx.source,
      transport: 'http',
      url: substitute(raw.url, ctx),
      headers: stringRecord(raw.headers, 'headers', ctx),
      description,
    };
  }
  if (type !== 'stdio') throw new Error(`unsupported type "${String(type)}" (use "stdio" or "http")`);
  if (typeof raw.command !== 'string' || !raw.command.trim()) throw new Error('"command" must be a non-empty string');
  if (raw.args !== undefined && (!Array.isArray(raw.args) || raw.args.some((a) => typeof a !== 'string')))
    throw new Error('"args" must be an array of strings');
  const args = ((raw.args as string[] | undefined) ?? []).map((a) => substitute(a, ctx));
  const cwd = typeof raw.cwd === 'string' ? substitute(raw.cwd, ctx) : ctx.workspaceFolder;
  return {
    name,
    source: ctx.source,
    transport: 'stdio',
    command: substitute(raw.command, ctx),
    args,
    env: stringRecord(raw.env, 'env', ctx),
    cwd,
    description,
  };
}

/**
 * Reads `{"servers": {name: {...}}}` (mcp_servers.json, .vscode/mcp.json and the setting share this shape).
 * A broken entry becomes a problem naming it; the other entries still load.
 */
export function parseServers(document: unknown, ctx: ParseContext): ParsedServers {
  const result: ParsedServers = { servers: [], problems: [] };
  if (!isRecord(document) || !isRecord(document.servers)) {
    result.problems.push({ source: ctx.source, message: 'expected an object with a "servers" object' });
    return result;
  }
  for (const [name, raw] of Object.entries(document.servers)) {
    try {
      result.servers.push(parseOne(name, raw, ctx));
    } catch (error) {
      result.problems.push({ source: ctx.source, server: name, message: errorText(error) });
    }
  }
  return result;
}

/** A JSON file that may not exist; JSON with comments and trailing commas (VS Code's mcp.json) is accepted. */
export function readServersFile(file: string, ctx: Omit<ParseContext, 'source'> & { source?: string }): ParsedServers {
  const source = ctx.source ?? path.basename(file);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { servers: [], problems: [] };
    return { servers: [], problems: [{ source, message: `cannot read ${file}: ${(error as Error).message}` }] };
  }
  let document: unknown;
  try {
    document = JSON.parse(stripJsonComments(text));
  } catch (error) {
    return { servers: [], problems: [{ source, message: `${file} is not valid JSON: ${(error as Error).message}` }] };
  }
  return parseServers(document, { ...ctx, source });
}

/** Removes // and /* comments and trailing commas outside strings. */
export function stripJsonComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      out += ch;
      if (ch === '\\') out += text[++i] ?? '';
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (ch === '/' && text[i + 1] === '*') {
      i += 2;
      while (i < text.length && !(text[i] === '*' && text[i + 1] === '/')) i++;
      i++;
    } else {
      out += ch;
    }
  }
  return out.replace(/,(\s*[}\]])/g, '$1');
}

/** Later sources win for the same name (workspace files over settings over nothing). */
export function mergeServers(...parts: ParsedServers[]): ParsedServers {
  const byName = new Map<string, ServerConfig>();
  const problems: ConfigProblem[] = [];
  for (const part of parts) {
    for (const server of part.servers) byName.set(server.name, server);
    problems.push(...part.problems);
  }
  return { servers: [...byName.values()], problems };
}
