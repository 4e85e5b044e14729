// Whose engine sessions one call reaches: the connection's scope (an MCP session's own, or the shared one), or,
// for clients without MCP sessions, the scope of the handle the call passes back (sessionHandles.ts).
import type { CallToolResult } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { SessionHandles } from './sessionHandles';
import { refused } from './shared';

export interface CallScope {
  /** The engine scope; undefined: the engine's shared sessions. */
  scope?: string;
  /** The handle that names it, when the client has no MCP session. */
  handle?: string;
  release(): void;
}

/** The scope for a call that passed `handle`, or undefined when that handle is not (or no longer) known. */
export type ScopeForCall = (handle: string | undefined) => CallScope | undefined;

export const handleArg = z.string().optional();

export function scopeForCall(options: { sessionScope?: string; sessionHandles?: SessionHandles }): ScopeForCall {
  const { sessionScope, sessionHandles } = options;
  if (!sessionHandles) {
    // A connection's scope is the connection's: a handle means nothing here and is ignored.
    const fixed: CallScope = { scope: sessionScope, release: () => undefined };
    return () => fixed;
  }
  return (handle) => {
    const held = sessionHandles.hold(handle);
    return held && { scope: held.scope, handle: held.handle, release: held.release };
  };
}

/** A call whose handle is unknown: its sessions are gone (or never were), and nothing ran. */
export function unknownHandle(): CallToolResult {
  return refused(
    'this handle names no live session: it expired after being idle, the server restarted, or it was never given. ' +
      'Its variables are gone; call again without handle to start a new session',
  );
}

/** Runs `work` in the call's scope, releasing it after; an unknown handle refuses the call. */
export async function inScope(
  scopes: ScopeForCall,
  handle: string | undefined,
  work: (scope: CallScope) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const scope = scopes(handle);
  if (!scope) return unknownHandle();
  try {
    return await work(scope);
  } finally {
    scope.release();
  }
}
