// environment: what the agent is working with (backends, sessions, limits, settings), and the few defaults it may change.
import type { CallToolResult } from '@modelcontextprotocol/server';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import {
  type ToolBridge,
  type Engine,
  agentSettingRefusal,
  assetsDir,
  inspectInterpreter,
  resolvePythonInterpreter,
  type PolicyConfig,
  SETTING_DESCRIPTIONS,
  validateSetting,
  type SettingKey,
  type SettingsPort,
  errorText,
} from '../../engine/index';
import { handleArg, inScope, type ScopeForCall } from '../callScope';
import { refused, structuredResult } from '../shared';
import type { RegisteredTool, ToolRegistry } from '../toolRegistry';

export interface EnvironmentContext {
  engine: Engine;
  settings: SettingsPort;
  bridge?: ToolBridge;
  /** How many learnings are stored, when the server has a learnings store. */
  learningsCount?: () => number;
  /**
   * Whose sessions are listed: the connection's, or for a client without MCP sessions those of the handle it
   * passes (callScope.ts); a call without one lists none, rather than starting a session to list.
   */
  scopes: ScopeForCall;
  /** The client has no MCP session: its sessions are its handles'. */
  byHandle: boolean;
}

function pyodideDistribution(): { pyodide_version?: string; python_version?: string } {
  try {
    const dir = path.join(assetsDir(), 'pyodide');
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'pyodide-lock.json'), 'utf8')) as {
      info?: { python?: string };
    };
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string };
    return { pyodide_version: pkg.version, python_version: lock.info?.python };
  } catch {
    return {};
  }
}

/** The guardrails under the names their refusals use (max_code_bytes, …), like every other key here. */
function guardrailsOf(policy: PolicyConfig): Record<string, unknown> {
  return {
    max_code_bytes: policy.maxCodeBytes,
    max_code_lines: policy.maxCodeLines,
    allow_imports: policy.allowImports,
    deny_imports: policy.denyImports,
    denied_tokens: policy.deniedTokens,
  };
}

async function describeEnvironment(
  ctx: EnvironmentContext,
  scope: string | undefined,
): Promise<Record<string, unknown>> {
  const { engine, settings } = ctx;
  const values = settings.values();
  const python = async () => {
    const disabled = engine.disabledReason('python') ?? null;
    const info = engine.backendInfo('python');
    if (disabled) return { state: info.state, disabled };
    try {
      const report = await inspectInterpreter(
        info.executable ?? resolvePythonInterpreter(values.python_path || undefined),
      );
      return {
        state: info.state,
        disabled,
        executable: report.executable,
        python_version: report.version,
        packages: report.packages,
        packages_truncated: report.packagesTruncated,
      };
    } catch (error) {
      return { state: info.state, disabled, error: `cannot inspect the interpreter: ${errorText(error)}` };
    }
  };
  const pyodideInfo = engine.backendInfo('pyodide');
  const backends: Record<string, unknown> = {
    pyodide: {
      state: pyodideInfo.state,
      disabled: engine.disabledReason('pyodide') ?? null,
      ...pyodideDistribution(),
      sandbox: engine.sandbox('pyodide') ?? null,
      // What bounds its memory and CPU here (backends/pyodide/sandboxBounds.ts).
      bounds: (await engine.describeBackend('pyodide')) ?? null,
    },
    python: {
      ...(await python()),
      sandbox: null,
      isolation: 'none: the workspace interpreter runs as you, with your files, processes and network',
      // What holds its processes together and bounds its memory here (backends/python/sessionBounds.ts).
      bounds: (await engine.describeBackend('python')) ?? null,
    },
  };
  if (engine.backendKinds.includes('jupyter')) {
    const info = engine.backendInfo('jupyter');
    backends.jupyter = {
      state: info.state,
      disabled: engine.disabledReason('jupyter') ?? null,
      ...(info.pythonVersion ? { python_version: info.pythonVersion } : {}),
      server: (await engine.describeBackend('jupyter')) ?? null,
      sandbox: null,
      isolation: "none: the kernel runs as the Jupyter Server's user, on its machine, with its files and network",
    };
  }
  const sessions = engine
    .describeSessions()
    .filter((s) => s.scope === scope)
    .map((s) => ({
      name: s.name,
      backend: s.backend,
      state: s.info.state,
      running: Boolean(s.runningRunId),
      scratch_dir: s.scratchDir ?? null,
    }));
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
    guardrails: guardrailsOf(engine.config.policy),
    settings: values,
    learnings: ctx.learningsCount?.() ?? null,
    external_servers: servers ?? [],
    // What happens to a tool call from code that may change something (engine/codemode/approval.ts).
    tool_approval: ctx.bridge
      ? {
          mode: ctx.bridge.approval.mode,
          auto_approve: ctx.bridge.approval.autoApprove,
          approve_person_runs: ctx.bridge.approval.approvePersonRuns,
          set_by: { mode: ctx.bridge.approval.names.mode, auto_approve: ctx.bridge.approval.names.autoApprove },
        }
      : null,
  };
}

/** `environment`: what the agent is working with, and the few defaults it may change. */
const environmentInput = z.object({
  key: z.enum(Object.keys(SETTING_DESCRIPTIONS) as [SettingKey, ...SettingKey[]]).optional(),
  value: z.union([z.string(), z.number(), z.boolean()]).optional(),
  handle: handleArg,
});

export function registerEnvironmentTool(registry: ToolRegistry, ctx: EnvironmentContext): RegisteredTool {
  return registry.register('environment', {
    description:
      'Backends (versions, packages, sandbox), sessions, limits, settings, external servers. key+value first sets a ' +
      'default: default_backend, timeout_s (1-3600), output_cap_kb (1-10240), auto_install (true/false), python_path.',
    input: environmentInput,
    // A changed default can be set back: nothing is lost.
    annotations: {
      title: 'Environment',
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    call: (args) =>
      ctx.byHandle && args.handle === undefined
        ? environmentResult(ctx, args, NO_SCOPE)
        : inScope(ctx.scopes, args.handle, (scope) => environmentResult(ctx, args, scope.scope)),
  });
}

/** A scope no session has. */
const NO_SCOPE = '-';

async function environmentResult(
  ctx: EnvironmentContext,
  args: z.output<typeof environmentInput>,
  scope: string | undefined,
): Promise<CallToolResult> {
  if (args.key === undefined && args.value === undefined)
    return structuredResult(undefined, await describeEnvironment(ctx, scope));
  const checked = validateSetting(args.key, args.value);
  if ('error' in checked) return refused(checked.error);
  const refusal = agentSettingRefusal(ctx.engine, checked);
  if (refusal) return refused(refusal);
  await ctx.settings.set(checked);
  return structuredResult(
    `${checked.key} is now ${JSON.stringify(ctx.settings.values()[checked.key])}`,
    await describeEnvironment(ctx, scope),
  );
}
