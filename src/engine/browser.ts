// The engine's door for the browser bundles, the results webview (src/webview/) and the MCP App (src/app/), which
// import nothing else from it (lint). Only modules that import nothing of Node's, and types: index.ts, the door for
// the MCP server and the extension, pulls in processes and the file system.
export { PendingRequests } from './requests';
export { TerminalText, type StyledLine, type TerminalColor, type TextStyle } from './terminalText';
export { tracebackFrames } from './tracebackFrames';
export type { RunRecord } from './history';
export type {
  BackendKind,
  Diagnostics,
  Display,
  DroppedDisplays,
  OutputItem,
  RunEvent,
  RunInfo,
  RunResult,
  StreamName,
  ToolApproval,
  ToolCallRecord,
} from './types';
