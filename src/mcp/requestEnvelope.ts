// What a 2026-07-28 request says of itself in its per-request envelope (`_meta`), which the SDK lifts out of the
// params; its public type leaves the keys undeclared. A 2025 request has none: its client spoke at `initialize`.
import {
  CLIENT_CAPABILITIES_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ClientCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';

/** A 2026-07-28 request: it carries the per-request envelope. */
export function isModernRequest(ctx: ServerContext): boolean {
  return envelopeOf(ctx)?.[PROTOCOL_VERSION_META_KEY] !== undefined;
}

/** The capabilities a 2026 request's client declares with it. */
export function requestCapabilities(ctx: ServerContext): (ClientCapabilities & { extensions?: object }) | undefined {
  return envelopeOf(ctx)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

function envelopeOf(ctx: ServerContext): Record<string, unknown> | undefined {
  return ctx.mcpReq.envelope as Record<string, unknown> | undefined;
}
