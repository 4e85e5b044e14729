// The kernel's stdin channel carries two kinds of question: the support module's host calls (code mode,
// input() through the harness), each a JSON request after a per-session marker, and prompts the kernel makes
// by itself. Each gets one answer.
import { errorText } from '../../errorText';

type HostCall = (method: string, params: unknown) => Promise<unknown>;

export function answerKernelInput(
  marker: string,
  prompt: string,
  password: boolean,
  call: HostCall,
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
  let request: { method: string; params: unknown };
  try {
    request = JSON.parse(prompt.slice(marker.length)) as { method: string; params: unknown };
  } catch (error) {
    answer(JSON.stringify({ ok: false, error: `malformed host call: ${errorText(error)}` }));
    return;
  }
  call(request.method, request.params).then(
    (result) => answer(JSON.stringify({ ok: true, result: result === undefined ? null : result })),
    (error: unknown) => answer(JSON.stringify({ ok: false, error: errorText(error) })),
  );
}
