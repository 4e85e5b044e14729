// What of the tool list can change while a server runs: run_python's and packages' annotations, which follow the
// backends' settings (the workspace interpreter on or off, the sandbox's network) and the external servers code can
// reach. One watch per server that has to tell clients: each connection's own server for 2025-era clients (its
// registry updates the tool and sends tools/list_changed), and one per HTTP server for 2026-07-28 clients, whose
// per-request servers live too briefly to notice and who hear of it on their subscriptions/listen stream.
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { Engine, ToolBridge } from '../engine/index';
import { packagesAnnotations } from './tools/packages';
import { runAnnotations } from './tools/run';

/** The tools whose annotations follow the settings, with what they are now. */
export interface WatchedAnnotations {
  run_python: ToolAnnotations;
  packages: ToolAnnotations;
}

export type WatchedTool = keyof WatchedAnnotations;

/** The watched tools' annotations as tools/list would show them now. */
export function watchedAnnotations(engine: Engine, bridge: ToolBridge | undefined): WatchedAnnotations {
  return { run_python: runAnnotations(engine, bridge), packages: packagesAnnotations(engine) };
}

/**
 * Calls `onChange` with the tools whose annotations changed, each time any do, until disposed. The engine's state
 * changes at every run's start and end, so most checks find nothing: a field-by-field compare, not a serialization.
 */
export function watchToolList(
  engine: Engine,
  bridge: ToolBridge | undefined,
  onChange: (changed: Partial<WatchedAnnotations>) => void,
): { dispose(): void } {
  let shown = watchedAnnotations(engine, bridge);
  const check = () => {
    const now = watchedAnnotations(engine, bridge);
    const changed: Partial<WatchedAnnotations> = {};
    for (const tool of Object.keys(now) as WatchedTool[])
      if (!sameAnnotations(now[tool], shown[tool])) changed[tool] = now[tool];
    shown = now;
    if (Object.keys(changed).length > 0) onChange(changed);
  };
  const listeners = [engine.onStateChange(check)];
  if (bridge) listeners.push(bridge.onDidChange(check));
  return { dispose: () => listeners.forEach((listener) => listener.dispose()) };
}

/** Annotations are flat: a title and hints. */
function sameAnnotations(a: ToolAnnotations, b: ToolAnnotations): boolean {
  const keys = Object.keys(a) as (keyof ToolAnnotations)[];
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
