// Pure text helpers of Generate and Run (no vscode import, so unit tests run them in plain node).

const FENCE = /```(?:python|py)?[ \t]*\n([\s\S]*?)```/i;

/** The Python in a model's answer: the first fenced block, else the whole answer when it has no fences. */
export function extractCode(answer: string): string | undefined {
  const fenced = FENCE.exec(answer);
  if (fenced) return fenced[1].trim() || undefined;
  return answer.includes('```') ? undefined : answer.trim() || undefined;
}
