// The walkthrough's checks, each printed as "ok" or "FAIL", and the polling its steps wait with.

/** A list of checks that `check(name, ok, detail)` adds to and prints through `say`. */
export function checkList(say) {
  const results = [];
  function check(name, ok, detail) {
    results.push({ name, ok: Boolean(ok) });
    say(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? ` (${detail})` : ''}`);
    return Boolean(ok);
  }
  return { check, results };
}

/** Polls fn until it returns a truthy value or the time is up; returns the last value. */
export async function poll(fn, timeout = 30_000, every = 250) {
  const end = Date.now() + timeout;
  let value;
  for (;;) {
    try {
      value = await fn();
    } catch {
      value = undefined;
    }
    if (value || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, every));
  }
}
