// A spare interpreter for the next new session: started before anyone asks (when a server starts, and again
// each time a session takes it), so a fresh session's first run does not wait for an interpreter to start.
// Kept for backends whose start is slow and whose fresh instances are all alike (Pyodide: a sandboxed host
// restored from the snapshot, about a second). The spare has its own scratch folder, bound into its sandbox
// when it starts; the session that takes it keeps that folder as its own, so nothing of the spare is shared.
import type { BackendKind } from './types';
import type { BackendFactory, BackendSession } from './backends/contract';

export interface Spare<Owner> {
  kind: BackendKind;
  /** The factory that made it: a spare of a replaced factory is never handed out. */
  factory: BackendFactory;
  instance: BackendSession;
  scratchDir: string | undefined;
  /** Set when a session takes the spare: its host calls and input requests go to that session from then on. */
  owner: { session?: Owner };
}

/** The one spare an engine holds, if any; which backend it is for is decided by the front door (keep). */
export class SpareSlot<Owner> {
  private spare: Spare<Owner> | undefined;
  /** The backend a spare is kept for, refilled after each take; undefined when none is wanted. */
  private wanted: BackendKind | undefined;

  /** The backend a spare is kept for, if any. */
  get kind(): BackendKind | undefined {
    return this.wanted;
  }

  /** Keeps a spare for `kind` from now on (none: undefined); returns a spare of another backend, to be disposed of. */
  want(kind: BackendKind | undefined): Spare<Owner> | undefined {
    this.wanted = kind;
    return this.spare && this.spare.kind !== kind ? this.release() : undefined;
  }

  get current(): Spare<Owner> | undefined {
    return this.spare;
  }

  hold(spare: Spare<Owner>): void {
    this.spare = spare;
  }

  /** The spare for a new session of `kind` made by `factory`, taken out of the slot (alive or not); undefined if none fits. */
  take(kind: BackendKind, factory: BackendFactory): Spare<Owner> | undefined {
    const spare = this.spare;
    if (!spare || spare.kind !== kind || spare.factory !== factory) return undefined;
    this.spare = undefined;
    return spare;
  }

  /** Empties the slot and returns what was in it, for the caller to dispose of. */
  release(): Spare<Owner> | undefined {
    const spare = this.spare;
    this.spare = undefined;
    return spare;
  }
}
