// Replies matched to requests by id, for every channel that carries both (the Pyodide host's frames, the
// Python driver's pipes, the results webview's postMessage). Plain TypeScript with no Node or VS Code
// imports: the webview bundle uses it too.

/** A request that got no reply within its time. */
export class RequestTimeout extends Error {}

interface Waiter<Reply> {
  resolve(reply: Reply): void;
  reject(error: Error): void;
  timer?: ReturnType<typeof setTimeout>;
}

/** The requests sent and not answered yet, by id. */
export class PendingRequests<Id, Reply> {
  private readonly waiters = new Map<Id, Waiter<Reply>>();

  /** How many requests wait for a reply. */
  get size(): number {
    return this.waiters.size;
  }

  /**
   * The reply to request `id`, registered before the request is sent. With `timeoutMs` it rejects with
   * RequestTimeout when no reply came in that time. An id can wait once at a time.
   */
  wait(id: Id, timeoutMs?: number): Promise<Reply> {
    if (this.waiters.has(id)) throw new Error(`request ${String(id)} is already waiting for its reply`);
    return new Promise<Reply>((resolve, reject) => {
      const waiter: Waiter<Reply> = { resolve, reject };
      if (timeoutMs !== undefined) {
        waiter.timer = setTimeout(
          () => this.reject(id, new RequestTimeout(`no reply to request ${String(id)} within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }
      this.waiters.set(id, waiter);
    });
  }

  /** Settles request `id` with its reply; false when nothing waits for it (unknown, timed out, or closed). */
  resolve(id: Id, reply: Reply): boolean {
    const waiter = this.take(id);
    waiter?.resolve(reply);
    return waiter !== undefined;
  }

  reject(id: Id, error: Error): boolean {
    const waiter = this.take(id);
    waiter?.reject(error);
    return waiter !== undefined;
  }

  /** The channel closed (or was replaced): every waiting request fails with `error`. */
  rejectAll(error: Error): void {
    for (const id of [...this.waiters.keys()]) this.reject(id, error);
  }

  private take(id: Id): Waiter<Reply> | undefined {
    const waiter = this.waiters.get(id);
    if (!waiter) return undefined;
    this.waiters.delete(id);
    clearTimeout(waiter.timer);
    return waiter;
  }
}
