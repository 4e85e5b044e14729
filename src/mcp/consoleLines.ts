// What libraries print on the console (the Jupyter client does: its reconnects, a Jupyter server's raw traceback)
// as one line of the server's log each, with the log's own prefix: stdout is the MCP stream, and a log read line
// by line gets neither a traceback spread over forty unmarked lines nor a JavaScript array's rendering.
import { formatWithOptions } from 'node:util';
import type { Logger } from '../engine/index';

/** One console call's arguments as one line: a traceback (or any text of several lines) keeps its first and last. */
export function consoleLine(args: unknown[]): string {
  const parts = args.map((arg) => {
    // A traceback sent as a list of lines, as Jupyter servers do.
    if (Array.isArray(arg) && arg.every((item) => typeof item === 'string')) return arg.join('\n');
    return arg instanceof Error ? `${arg.name}: ${arg.message}` : arg;
  });
  const lines = formatWithOptions({ breakLength: Infinity, compact: true }, ...parts)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  if (lines.length <= 2) return lines.join(' ');
  // A traceback's first line says what it is and its last what went wrong; the frames between are the server's.
  return `${lines[0]} … ${lines[lines.length - 1]} (${lines.length - 2} lines between left out)`;
}

/** Sends every console method to `log`, one line per call. */
export function consoleToLog(log: Logger): void {
  console.log = console.info = console.debug = (...args: unknown[]) => log.info(consoleLine(args));
  console.warn = (...args: unknown[]) => log.warn(consoleLine(args));
  console.error = (...args: unknown[]) => log.error(consoleLine(args));
}
