// The kernel's stdin channel carries two kinds of question: the support module's host calls (code mode,
// input() through the harness), each a JSON request after a per-session marker, and prompts the kernel makes
// by itself. Each gets one answer.
//
// A kernel waits on one question at a time, and an interrupt can abandon a host call the host is still
// answering; that late answer may reach the kernel while it waits on the next call. So every host call has
// an id, its answer carries it, and the kernel asks again (same id) when an answer is not its own: the host
// answers a repeated id from the call it already made, never calling the tool twice.
import { errorText } from '../../errorText';

type HostCall = (method: string, params: unknown) => Promise<unknown>;

/** The host calls of one run, by the id the kernel gave them. */
export type CallsById = Map<unknown, Promise<unknown>>;

export function answerKernelInput(
  marker: string,
  prompt: string,
  password: boolean,
  call: HostCall,
  calls: CallsById,
  answer: (value: string) => void,
): void {
  if (!prompt.startsWith(marker)) {
    // The kernel asks by itself (code that bypasses input(), a tool that prompts): the person answers, and
    // a question nobody answers gets an empty line.
    call('input', { prompt, password }).then(
      (value) => answer(typeof value === 'string' ? value : ''),
      () => answer(''),
    );
    return;
  }
  let request: { id?: unknown; method: string; params: unknown };
  try {
    request = JSON.parse(prompt.slice(marker.length)) as typeof request;
  } catch (error) {
    answer(JSON.stringify({ ok: false, error: `malformed host call: ${errorText(error)}` }));
    return;
  }
  let result = calls.get(request.id);
  if (!result) {
    result = call(request.method, request.params);
    calls.set(request.id, result);
  }
  const id = request.id ?? null;
  result.then(
    (value) => answer(JSON.stringify({ id, ok: true, result: value === undefined ? null : value })),
    (error: unknown) => answer(JSON.stringify({ id, ok: false, error: errorText(error) })),
  );
}
