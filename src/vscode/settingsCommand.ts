// Which command opens the Settings editor where a setting can be set. Pure (no vscode import), so it is unit-tested
// against the extension's own manifest.

/** Settings scopes VS Code keeps per machine: in a remote window they are set in the Remote tab, not the User tab. */
const MACHINE_SCOPES = new Set(['machine', 'machine-overridable']);

interface Manifest {
  contributes?: { configuration?: unknown };
}

/** The scope `manifest` declares for `key` (contributes.configuration, one section or several). */
export function scopeIn(manifest: Manifest, key: string): string | undefined {
  const sections = [manifest.contributes?.configuration ?? []].flat() as {
    properties?: Record<string, { scope?: string }>;
  }[];
  return sections.map((section) => section.properties?.[key]?.scope).find((scope) => scope !== undefined);
}

/**
 * The command that opens the Settings editor where a setting of `scope` can be set, in a window on `remoteName`:
 * a machine-scoped setting in a remote window (SSH, a container, WSL, code-server) lives in the Remote tab, where
 * the User tab would say "No Settings Found".
 */
export function settingsCommandFor(scope: string | undefined, remoteName: string | undefined): string {
  return remoteName && scope && MACHINE_SCOPES.has(scope)
    ? 'workbench.action.openRemoteSettings'
    : 'workbench.action.openSettings';
}
