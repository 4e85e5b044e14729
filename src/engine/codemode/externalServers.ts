import * as fs from 'node:fs';
import type { Logger } from '../types';
import type { ToolBridge } from './bridge';
import { ExternalServer } from './externalServer';
import {
  mergeServers,
  readServersFile,
  type ConfigProblem,
  type ParsedServers,
  type ServerConfig,
} from './serverConfig';

export interface ServerSources {
  /** JSON files of the `{"servers": {...}}` shape, lowest precedence first. Missing files are fine. */
  files: string[];
  workspaceFolder?: string;
  /** Servers from a setting, already parsed; files win over them for the same name. */
  fromSettings?: ParsedServers;
}

/**
 * Keeps the bridge's "external" providers in step with the config files: watches them, and on a change
 * closes servers that went away or changed and adds new ones (connected lazily, on first use).
 */
export class ExternalServers {
  private servers = new Map<string, ExternalServer>();
  private problemList: ConfigProblem[] = [];
  private watched: string[] = [];
  private readonly onFileChange = () => void this.reload();

  constructor(
    private readonly bridge: ToolBridge,
    private readonly log: Logger,
    private sources: ServerSources,
  ) {}

  /** Problems of the current config: broken files and entries, each naming its source. */
  get problems(): ConfigProblem[] {
    return this.problemList;
  }

  async start(): Promise<void> {
    await this.reload();
    this.watch();
  }

  async setSources(sources: ServerSources): Promise<void> {
    this.unwatch();
    this.sources = sources;
    await this.reload();
    this.watch();
  }

  async reload(): Promise<void> {
    const parts = this.sources.files.map((file) =>
      readServersFile(file, { workspaceFolder: this.sources.workspaceFolder }),
    );
    const merged = mergeServers(this.sources.fromSettings ?? { servers: [], problems: [] }, ...parts);
    this.problemList = merged.problems;
    this.bridge.configProblems = merged.problems;
    for (const problem of merged.problems)
      this.log.warn(
        `MCP server config ${problem.source}${problem.server ? ` / ${problem.server}` : ''}: ${problem.message}`,
      );
    const next = new Map<string, ExternalServer>();
    for (const config of merged.servers) {
      const existing = this.servers.get(config.name);
      next.set(
        config.name,
        existing && sameConfig(existing.config, config) ? existing : new ExternalServer(config, this.log),
      );
    }
    this.servers = next;
    await this.bridge.setProviders('external', [...next.values()]);
  }

  private watch(): void {
    this.watched = [...this.sources.files];
    // watchFile polls, which also notices a file created after start (fs.watch cannot watch a missing file).
    for (const file of this.watched) fs.watchFile(file, { interval: 1000, persistent: false }, this.onFileChange);
  }

  private unwatch(): void {
    for (const file of this.watched) fs.unwatchFile(file, this.onFileChange);
    this.watched = [];
  }

  dispose(): void {
    this.unwatch();
  }
}

function sameConfig(a: ServerConfig, b: ServerConfig): boolean {
  return JSON.stringify({ ...a, source: '' }) === JSON.stringify({ ...b, source: '' });
}
