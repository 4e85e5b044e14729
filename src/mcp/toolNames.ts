// The one list of the MCP tools this server can offer. The tool modules register under these names and the
// VS Code edge reads them (to keep Python from calling our own tools through VS Code), so no name is copied.

export const TOOL_NAMES = ['run_python', 'code_file', 'learnings', 'packages', 'environment'] as const;

export type ToolName = (typeof TOOL_NAMES)[number];
