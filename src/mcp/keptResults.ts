// Tool results kept after their call was answered, until a client fetches them (a 2025 task's tasks/result, a 2026
// task's tasks/get), bounded in bytes: past the budget the oldest give up their displays (resultBudget.ts), and a
// result larger than the budget by itself is kept without them. Both revisions' tasks keep their results here;
// the holders of one HTTP server can also share a budget (SharedResultBudget).
import type { CallToolResult } from '@modelcontextprotocol/server';
import { approximateBytes, shrinkToolResult } from './resultBudget';

/** Bytes of task results one connection keeps until they are fetched or expire. */
export const MAX_TASK_RESULT_BYTES = 64 * 1024 * 1024;
/** Per HTTP server, all its MCP sessions' task results together: two connections' worth, whatever the cap. */
export const MAX_SERVER_TASK_RESULT_BYTES = 128 * 1024 * 1024;
/** What a result is shrunk to when it gives up its displays for newer ones. */
const SHRUNK_RESULT_BYTES = 256 * 1024;
const WHY = 'task results are kept without their displays once the server holds too many';

interface Kept {
  result: CallToolResult;
  bytes: number;
}

export class KeptResults {
  /** By id, oldest first. */
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly shared?: SharedResultBudget,
  ) {}

  /** Bytes held now. */
  get heldBytes(): number {
    return this.bytes;
  }

  get(id: string): CallToolResult | undefined {
    return this.kept.get(id)?.result;
  }

  /** Keeps `result` under `id`, whole unless it alone is over the budget; older results shrink to make room. */
  keep(id: string, result: CallToolResult): void {
    let kept = result;
    let bytes = approximateBytes(result);
    if (bytes > this.maxBytes) {
      kept = shrinkToolResult(result, SHRUNK_RESULT_BYTES, WHY);
      bytes = approximateBytes(kept);
    }
    const before = this.bytes;
    this.kept.set(id, { result: kept, bytes });
    this.bytes += bytes;
    for (const [other, entry] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      if (other !== id) this.shrink(entry);
    }
    this.shared?.held(this, this.bytes - before, id);
  }

  /** The result of `id` is no longer wanted (its task expired). */
  forget(id: string): void {
    const entry = this.kept.get(id);
    if (!entry) return;
    this.kept.delete(id);
    this.bytes -= entry.bytes;
    this.shared?.held(this, -entry.bytes);
  }

  /** Shrinks the oldest whole result but `keep`'s: the bytes freed (0: none left to shrink). */
  shrinkOldest(keep?: string): number {
    for (const [id, entry] of this.kept) {
      const freed = id === keep ? 0 : this.shrink(entry);
      if (freed > 0) return freed;
    }
    return 0;
  }

  /** Every result goes (the connection or server ended), and with them their share of a shared budget. */
  clear(): void {
    this.shared?.release(this);
    this.kept.clear();
    this.bytes = 0;
  }

  /** The result without its displays: the bytes freed. */
  private shrink(entry: Kept): number {
    if (entry.bytes <= SHRUNK_RESULT_BYTES) return 0;
    entry.result = shrinkToolResult(entry.result, SHRUNK_RESULT_BYTES, WHY);
    const now = approximateBytes(entry.result);
    const freed = entry.bytes - now;
    entry.bytes = now;
    this.bytes -= freed;
    return freed;
  }
}

/**
 * What the kept results of one server's connections hold, together: past `maxBytes` the holder with the most gives
 * up its oldest results' displays first (nobody's results shrink while another's hold more).
 */
export class SharedResultBudget {
  private readonly holders = new Set<KeptResults>();
  private bytes = 0;

  constructor(readonly maxBytes = MAX_SERVER_TASK_RESULT_BYTES) {}

  /** `holder` holds `change` bytes more (or fewer); past the budget results shrink, the one kept as `keep` never. */
  held(holder: KeptResults, change: number, keep?: string): void {
    this.holders.add(holder);
    this.bytes += change;
    const tried = new Set<KeptResults>();
    while (this.bytes > this.maxBytes) {
      let largest: KeptResults | undefined;
      for (const h of this.holders) if (!tried.has(h) && h.heldBytes > (largest?.heldBytes ?? -1)) largest = h;
      if (!largest) return;
      const freed = largest.shrinkOldest(keep);
      if (freed > 0) this.bytes -= freed;
      else tried.add(largest);
    }
  }

  /** The holder's connection ended: what it held is free. */
  release(holder: KeptResults): void {
    if (this.holders.delete(holder)) this.bytes -= holder.heldBytes;
  }
}
