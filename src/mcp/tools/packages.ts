// packages: install packages into a session's interpreter, or check what is there.
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { MAX_PACKAGES, type Engine, type PackagesResult } from '../../engine/index';
import { handleArg, inScope, type CallScope, type ScopeForCall } from '../callScope';
import type { ClientLog } from '../clientLog';
import { backendArg, codeReachesOutside, sessionArg, structuredResult, type RunChannel } from '../shared';
import type { RegisteredTool, ToolRegistry } from '../toolRegistry';

export interface PackageToolsContext {
  engine: Engine;
  log: ClientLog;
  /** Whose sessions a call reaches (callScope.ts). */
  scopes: ScopeForCall;
}

const packagesInput = z.object({
  action: z.enum(['install', 'check']),
  // The length is checked here, not as maxLength, which OpenAI's strict mode does not take (test/support/providerSchemaRules.ts).
  packages: z
    .array(z.string().refine((spec) => spec.length <= 2048, 'a package spec is at most 2048 characters'))
    .min(1)
    .max(MAX_PACKAGES),
  backend: backendArg,
  session: sessionArg,
  handle: handleArg,
});

/**
 * An install changes the interpreter's environment (pip upgrades and replaces); it reaches the network through
 * pip, or through micropip when the sandbox's network is on.
 */
export function packagesAnnotations(engine: Engine): ToolAnnotations {
  return {
    title: 'Packages',
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: codeReachesOutside(engine, {}),
  };
}

/** One line per package, then the summary. */
function renderPackages(result: PackagesResult): string {
  const lines = result.packages.map((p) => {
    const version = p.version ? ` ${p.version}` : '';
    const from = p.source && p.installed && result.action === 'install' ? ` (${p.source})` : '';
    if (p.installed) return `ok ${p.name}${version}${from}`;
    if (result.action === 'install') return `FAILED ${p.requested}${version}: ${p.error ?? 'not installed'}`;
    return `${p.version ? 'UNMET' : 'MISSING'} ${p.requested}${version}: ${p.error ?? 'not installed'}`;
  });
  // Each failure is on its own line already; the summary line repeats only a refusal's reason.
  lines.push(
    `[${result.packages.length === 0 ? result.message : countLine(result)}; ${result.backend}, session "${result.session}", ${result.duration_ms} ms]`,
  );
  return lines.join('\n');
}

/** A check counts a package present in a version that misses the request apart from one that is absent. */
function countLine(result: PackagesResult): string {
  const ok = result.packages.filter((p) => p.installed).length;
  const total = result.packages.length;
  if (result.action === 'install') return `${ok} of ${total} installed`;
  const unmet = result.packages.filter((p) => !p.installed && p.version).length;
  return `${ok} of ${total} installed as requested${unmet ? `, ${unmet} in another version` : ''}`;
}

function packagesResult(result: PackagesResult, scope: CallScope): CallToolResult {
  // A check that finds a package missing did its job; an install that leaves one missing did not.
  const isError = result.action === 'install' ? !result.success : result.packages.length === 0;
  return structuredResult(renderPackages(result), scope.handle ? { ...result, handle: scope.handle } : result, isError);
}

/** `packages`: install, or check what is there. */
export function registerPackagesTool(registry: ToolRegistry, ctx: PackageToolsContext): RegisteredTool {
  const { engine, log, scopes } = ctx;
  return registry.register('packages', {
    description:
      'Install or check packages for run_python: specs ("numpy>=1.26,<2"), and for install .whl paths or https URLs ' +
      '(#sha256=<hex>). pyodide: into that session; python: pip into its environment.',
    input: packagesInput,
    annotations: packagesAnnotations(engine),
    call: (args, channel) =>
      inScope(scopes, args.handle, async (scope) => {
        const request = {
          packages: args.packages,
          backend: args.backend,
          session: args.session,
          scope: scope.scope,
          origin: 'mcp' as const,
        };
        const result =
          args.action === 'install' ? await engine.installPackages(request) : await engine.checkPackages(request);
        await tellPackagesFinished(log, result, channel);
        return packagesResult(result, scope);
      }),
  });
}

/** What an install put in, and what failed, goes to the client's log (a check changes nothing, so says nothing). */
async function tellPackagesFinished(log: ClientLog, result: PackagesResult, extra: RunChannel): Promise<void> {
  if (result.action !== 'install') return;
  const installed = result.packages
    .filter((p) => p.installed)
    .map((p) => (p.version ? `${p.name}==${p.version}` : p.name));
  const failed = result.packages
    .filter((p) => !p.installed)
    .map((p) => ({ package: p.requested, error: p.error ?? null }));
  await log.send(
    result.success ? 'info' : 'warning',
    { event: 'install', backend: result.backend, session: result.session, installed, failed, message: result.message },
    extra,
  );
}
