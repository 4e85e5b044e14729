// The engine's door: everything the MCP server (src/mcp/) and the extension (src/vscode/) use of the engine is
// exported here, and lint keeps them from reaching past it (eslint.config.mjs). What is not here is the engine's own;
// the browser bundles have a door of their own (browser.ts).

// The engine and how the front ends make and configure it.
export { Engine, type EngineOptions, type SessionDescription } from './engine';
export type { RunOptions } from './runs/runOptions';
export { MAX_PACKAGES, type PackagesOptions } from './installs';
export {
  defaultEngineConfig,
  isBackendKind,
  MAX_TIMEOUT_S,
  SESSION_NAME,
  timeoutProblem,
  type EngineConfig,
  type SettingNames,
} from './config';
export {
  createEngine,
  defaultStorageDir,
  jupyterBackendFor,
  LOCAL_JUPYTER,
  pyodideBackendFor,
  type EngineSetup,
  type JupyterSettings,
  type PyodideSettings,
} from './setup';
export type { PolicyConfig } from './policy';
export {
  FileSettings,
  SETTING_DESCRIPTIONS,
  settingsOf,
  validateSetting,
  type SettingKey,
  type SettingsPort,
  type SettingValue,
  type UserSettings,
} from './userSettings';
export { agentSettingRefusal } from './agentSettings';

// What runs, results and events are, as every front end sees them.
export * from './types';
export { describeToolCall, renderResultPieces } from './result';
export { finalText } from './terminalText';
export { describeDefaultInterpreter, findInterpreters, type FoundInterpreter } from './interpreterSearch';
export { failingLineIn, tracebackFrames } from './tracebackFrames';
export { errorText } from './errorText';
export { RunHistory, type RunRecord } from './history';

// Backends, as a front end chooses and swaps them.
export type { BackendFactory } from './backends/contract';
export { createPythonBackend } from './backends/python/backend';
export { inspectInterpreter } from './backends/python/inspect';
export { resolvePythonInterpreter } from './backends/python/interpreter';
export { isNetworkAccess, isSandboxChoice, type SandboxChoice } from './sandbox/index';

// Packages: what a missing module is and whether an interpreter may be installed into.
export { isExternallyManaged } from './packages/externallyManaged';
export { distributionForImport, missingTopLevelModule } from './packages/importNames';
export { findLocalModule } from './packages/localModules';

// Code mode: the tool bridge, its servers and the approval of tool calls.
export { attachCodeMode, type CodeMode } from './codemode/index';
export { defaultApprovalPolicy, isApprovalMode, parseToolPatterns, type ApprovalPolicy } from './codemode/approval';
export { shownArgs, shownName } from './codemode/questionText';
export type { BridgePolicy, ToolBridge } from './codemode/bridge';
export type { ServerSources } from './codemode/externalServers';
export { parseServers, type ConfigProblem } from './codemode/serverConfig';
export type { ProviderStatus, ToolProvider, ToolSpec } from './codemode/toolProvider';

// The stores of code files and learnings.
export { createStores, StoreError, type Learning, type Stores } from './stores/index';
export type { CodeFileInfo, CodeFiles } from './stores/codeFiles';
export type { LearningInput } from './stores/learnings';

// Small helpers the front ends share with the engine.
export { assetsDir } from './paths';
export { socketPathIn } from './localAddresses';
export { PendingRequests } from './requests';
