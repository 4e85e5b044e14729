// What the results page (and the explorer's Re-run) asks of the extension: run a past run's code again,
// interrupt a run, call a tool from a tool form.
import type { RunHistory, RunResult, ToolApprovals } from '../../engine/index';
import type { LocalMcpClient } from '../../mcp/localClient';
import { personRunOptions } from '../personRun';
import type { ResultsActions } from '../resultsView';
import type { BridgeService } from '../services/bridgeService';
import type { EngineService } from '../services/engineService';
import type { ExtensionSettings } from '../settings';
import type { ResultsPresenter } from './runCommands';

export interface ResultsActionDeps {
  history: RunHistory;
  engine: Pick<EngineService, 'get' | 'ifCreated'>;
  bridge: Pick<BridgeService, 'get'>;
  /** The in-process client of our own MCP tools. */
  tools: () => Promise<LocalMcpClient>;
  settings: () => ExtensionSettings;
  /** The results view; a getter, since the view is made with these actions. */
  results: () => Pick<ResultsPresenter, 'present'>;
  /** The window's tool-approval question. */
  toolApprovals: ToolApprovals;
}

/** Runs a past run's code again, in its backend and session, as your run. */
export async function rerun(deps: ResultsActionDeps, runId: string): Promise<RunResult | undefined> {
  const record = deps.history.get(runId);
  if (!record) return undefined;
  const engine = await deps.engine.get();
  void deps.results().present();
  return engine.run({ code: record.run.code, backend: record.run.backend, session: record.run.session, origin: 'command', ...personRunOptions(deps.settings().personRun, deps.toolApprovals) });
}

export function resultsActions(deps: ResultsActionDeps): ResultsActions {
  return {
    rerun: (runId) => rerun(deps, runId),
    // The card's Interrupt (Cancel on a queued card): the run is stopped whether it waits, starts or runs.
    interrupt: async (runId) => (await deps.engine.ifCreated())?.cancelRun(runId) ?? false,
    invokeTool: async (server, name, args) => {
      if (server) {
        const { bridge } = await deps.bridge.get();
        return { ok: true, content: await bridge.call(server, name, args) };
      }
      const result = await (await deps.tools()).callTool(name, args);
      return { ok: !result.isError, content: result.content };
    },
  };
}
