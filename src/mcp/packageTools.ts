import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { MAX_PACKAGES, type Engine } from '../engine/engine';
import { BACKEND_KINDS, type BackendKind, type PackagesResult } from '../engine/types';

export interface PackageToolsContext {
  engine: Engine;
}

const backend = z
  .enum(BACKEND_KINDS as [string, ...string[]])
  .optional()
  .describe('"pyodide" (sandboxed, the default unless configured otherwise) or "python" (the workspace interpreter).');
const session = z.string().max(64).optional().describe('Session to install into or check (default "default"), as in run_python.');

/** One line per package, then the summary. */
function renderPackages(result: PackagesResult): string {
  const lines = result.packages.map((p) => {
    const version = p.version ? ` ${p.version}` : '';
    const from = p.source && p.installed && result.action === 'install' ? ` (${p.source})` : '';
    return p.installed ? `ok ${p.name}${version}${from}` : `FAILED ${p.requested}${version}: ${p.error ?? 'not installed'}`;
  });
  // Each failure is on its own line already; the summary line repeats only a refusal's reason.
  const summary = result.packages.length === 0 ? result.message : `${result.packages.filter((p) => p.installed).length} of ${result.packages.length} installed`;
  lines.push(`[${summary}; ${result.backend}, session "${result.session}", ${result.duration_ms} ms]`);
  return lines.join('\n');
}

function toolResult(result: PackagesResult): CallToolResult {
  return {
    content: [{ type: 'text', text: renderPackages(result) }],
    structuredContent: result as unknown as Record<string, unknown>,
    // A check that finds a package missing did its job; an install that leaves one missing did not.
    isError: result.action === 'install' ? !result.success : result.packages.length === 0,
  };
}

/** `install_packages` and `check_packages` (DESIGN.md section 3). */
export function registerPackageTools(server: McpServer, ctx: PackageToolsContext): void {
  const { engine } = ctx;

  server.registerTool(
    'install_packages',
    {
      title: 'Install Python packages',
      description:
        'Install packages for run_python. Each entry is a name with optional extras and version specifiers ("requests", ' +
        '"numpy>=1.26,<2"), an absolute path to a .whl file, or an http(s) URL of a .whl (either may end in #sha256=<hex>, which is checked). ' +
        'pyodide: packages of the Pyodide distribution, then PyPI via micropip (pure-Python wheels); they live in that session ' +
        'until it is reset. python: pip into the selected environment. Without network only local wheels install. ' +
        'Returns each package with its installed version.',
      inputSchema: {
        packages: z.array(z.string().max(2048)).min(1).max(MAX_PACKAGES).describe(`1-${MAX_PACKAGES} packages.`),
        backend,
        session,
      },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (args): Promise<CallToolResult> =>
      toolResult(await engine.installPackages({ packages: args.packages, backend: args.backend as BackendKind | undefined, session: args.session })),
  );

  server.registerTool(
    'check_packages',
    {
      title: 'Check Python packages',
      description:
        'Report which packages are installed for run_python, with versions; a version specifier ("pandas>=2") must be met. Installs nothing.',
      inputSchema: {
        packages: z.array(z.string().max(2048)).min(1).max(MAX_PACKAGES).describe(`1-${MAX_PACKAGES} package names.`),
        backend,
        session,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args): Promise<CallToolResult> =>
      toolResult(await engine.checkPackages({ packages: args.packages, backend: args.backend as BackendKind | undefined, session: args.session })),
  );
}
