// Where a Python traceback points: its `File "...", line N` frames, for links and editor diagnostics. Pure
// (no Node or VS Code import): the results page bundles it too.

export interface TracebackFrame {
  file: string;
  line: number;
  /** Offsets of the `File "...", line N` text in the traceback, for turning it into a link. */
  start: number;
  end: number;
}

const FRAME = /File "([^"\n]+)", line (\d+)/g;

/** Every frame that names a real file (not `<cell 3>` or `<frozen ...>`), outermost first. */
export function tracebackFrames(traceback: string): TracebackFrame[] {
  const frames: TracebackFrame[] = [];
  for (const match of traceback.matchAll(FRAME)) {
    const file = match[1]!;
    if (file.startsWith('<')) continue;
    frames.push({ file, line: Number(match[2]), start: match.index!, end: match.index! + match[0].length });
  }
  return frames;
}

/** The innermost frame in `file`: where that file's code failed. */
export function failingLineIn(traceback: string, file: string): number | undefined {
  return tracebackFrames(traceback)
    .filter((frame) => frame.file === file)
    .pop()?.line;
}
