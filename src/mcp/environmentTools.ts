import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { ToolBridge } from '../engine/codemode/bridge';
import type { Engine } from '../engine/engine';
import { assetsDir } from '../engine/paths';
import { inspectInterpreter } from '../engine/python/inspect';
import { resolvePythonInterpreter } from '../engine/python/interpreter';
import { SETTING_DESCRIPTIONS, validateSetting, type SettingsPort } from '../engine/userSettings';
import { errorText } from '../engine/errorText';

export interface EnvironmentContext {
  engine: Engine;
  settings: SettingsPort;
  bridge?: ToolBridge;
  /** How many learnings are stored, when the server has a learnings store. */
  learningsCount?: () => number;
}

function pyodideDistribution(): { pyodide_version?: string; python_version?: string } {
  try {
    const dir = path.join(assetsDir(), 'pyodide');
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'pyodide-lock.json'), 'utf8')) as { info?: { python?: string } };
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string };
    return { pyodide_version: pkg.version, python_version: lock.info?.python };
  } catch {
    return {};
  }
}

async function describeEnvironment(ctx: EnvironmentContext): Promise<Record<string, unknown>> {
  const { engine, settings } = ctx;
  const values = settings.values();
  const python = async () => {
    const disabled = engine.disabledReason('python') ?? null;
    const info = engine.backendInfo('python');
    if (disabled) return { state: info.state, disabled };
    try {
      const report = await inspectInterpreter(info.executable ?? resolvePythonInterpreter(values.python_path || undefined));
      return { state: info.state, disabled, executable: report.executable, python_version: report.version, packages: report.packages, packages_truncated: report.packagesTruncated };
    } catch (error) {
      return { state: info.state, disabled, error: `cannot inspect the interpreter: ${errorText(error)}` };
    }
  };
  const pyodideInfo = engine.backendInfo('pyodide');
  const backends: Record<string, unknown> = {
    pyodide: { state: pyodideInfo.state, disabled: engine.disabledReason('pyodide') ?? null, ...pyodideDistribution(), sandbox: engine.sandbox('pyodide') ?? null },
    python: { ...(await python()), sandbox: null, isolation: 'none: the workspace interpreter runs as you, with your files, processes and network' },
  };
  const sessions = engine.describeSessions().map((s) => ({ name: s.name, backend: s.backend, state: s.info.state, running: Boolean(s.runningRunId) }));
  const servers = ctx.bridge?.providers().map((p) => {
    const status = p.status();
    return { name: status.name, state: status.state, tools: status.toolCount ?? null, error: status.error ?? null };
  });
  return {
    default_backend: engine.config.defaultBackend,
    backends,
    sessions,
    limits: {
      timeout_s: engine.config.timeoutS,
      output_cap_kb: Math.round(engine.config.outputCapBytes / 1024),
      interrupt_grace_ms: engine.config.interruptGraceMs,
      max_sessions_per_backend: engine.config.maxSessions,
    },
    guardrails: engine.config.policy,
    settings: values,
    learnings: ctx.learningsCount?.() ?? null,
    external_servers: servers ?? [],
  };
}

/** `get_environment` and `configure`: what the agent is working with, and the few defaults it may change. */
export function registerEnvironmentTools(server: McpServer, ctx: EnvironmentContext): void {
  server.registerTool(
    'get_environment',
    {
      title: 'Describe the Python environment',
      description:
        'Backends (state, interpreter, versions, installed packages), sessions, limits, guardrails, settings, learnings count and external MCP servers.',
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    async (): Promise<CallToolResult> => {
      const environment = await describeEnvironment(ctx);
      return { content: [{ type: 'text', text: JSON.stringify(environment, null, 1) }], structuredContent: environment };
    },
  );

  server.registerTool(
    'configure',
    {
      title: 'Change a default',
      description: `Change one default, persisted. Keys: ${Object.entries(SETTING_DESCRIPTIONS)
        .map(([k, d]) => `${k} (${d})`)
        .join('; ')}.`,
      inputSchema: {
        key: z.enum(Object.keys(SETTING_DESCRIPTIONS) as [string, ...string[]]).describe('The setting to change.'),
        value: z.union([z.string(), z.number(), z.boolean()]).describe('Its new value.'),
      },
    },
    async (args): Promise<CallToolResult> => {
      const checked = validateSetting(args.key, args.value);
      if ('error' in checked) return { isError: true, content: [{ type: 'text', text: checked.error }] };
      await ctx.settings.set(checked);
      const settings = ctx.settings.values();
      return {
        content: [{ type: 'text', text: `${checked.key} is now ${JSON.stringify(settings[checked.key])}` }],
        structuredContent: { key: checked.key, value: settings[checked.key], settings },
      };
    },
  );
}
