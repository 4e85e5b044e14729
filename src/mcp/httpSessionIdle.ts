// How long an HTTP MCP session may go without a request before it ends and frees its Python sessions: shared by
// the server (http.ts), the CLI's help and the VS Code setting, none of which should load the HTTP stack for it.
export const DEFAULT_SESSION_IDLE_MINUTES = 30;
