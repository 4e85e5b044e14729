// What the extension's own tests in a real VS Code (test/vscode/) reach inside it. src/extension.ts exports it only
// while extension tests run (ExtensionMode.Test, set by VS Code when it is started with --extensionTestsPath): another
// extension could read these exports, and an installed extension never runs in that mode.
import type { RunHistory } from '../engine/index';
import type { Container } from './container';
import type { ApprovalStandIn } from './toolApproval';
import type { ResultsView } from './views/resultsView';
import type { RunStatusSnapshot } from './views/statusBar';
import type { ToolExplorer } from './views/toolExplorer';

export interface CodeModeTestApi {
  /** The services (the engine is created on first use). */
  container: Container;
  history: RunHistory;
  results: ResultsView;
  explorer: ToolExplorer;
  activationMs: number;
  /** What the runs output channel received most recently. */
  runsChannelText(): string;
  /** How often the runs output channel was brought into view. */
  runsChannelReveals(): number;
  /** What the status bar item of your runs shows now. */
  runStatus(): RunStatusSnapshot;
  /** How many input boxes input() in a person's run has asked VS Code for so far. */
  inputBoxesAsked(): number;
  /** Hooks for what a headless test cannot do itself. */
  testHooks: TestHooks;
}

export interface TestHooks {
  /** Answers the tool-approval question instead of its modal, which VS Code refuses to show during extension tests. */
  answerToolApprovals(standIn: ApprovalStandIn | undefined): void;
}

export function testApi(container: Container, activationMs: number): CodeModeTestApi {
  const { history, results, explorer, output, status } = container;
  return {
    container,
    history,
    results,
    explorer,
    activationMs,
    runsChannelText: () => output.transcript(),
    runsChannelReveals: () => output.reveals,
    runStatus: () => status.snapshot(),
    inputBoxesAsked: () => container.inputBoxesAsked,
    testHooks: { answerToolApprovals: (standIn) => container.toolApprovals.answerWith(standIn) },
  };
}
