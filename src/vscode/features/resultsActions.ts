// What the results page (and the explorer's Re-run) asks of the extension: run a past run's code again,
// interrupt a run, call a tool from a tool form.
import type { RunHistory } from '../../engine/index';
import type { LocalMcpClient } from '../../mcp/index';
import type { BridgeService } from '../services/bridgeService';
import type { EngineService } from '../services/engineService';
import type { PersonRunService } from '../services/personRuns';
import type { ResultsActions } from '../views/resultsView';

export interface ResultsActionDeps {
  history: Pick<RunHistory, 'get'>;
  engine: Pick<EngineService, 'ifCreated'>;
  bridge: Pick<BridgeService, 'get'>;
  /** The in-process client of our own MCP tools. */
  tools: () => Promise<LocalMcpClient>;
  personRuns: Pick<PersonRunService, 'run'>;
}

export function resultsActions(deps: ResultsActionDeps): ResultsActions {
  return {
    // A past run's code again, in its backend and session, as your run.
    rerun: async (runId) => {
      const record = deps.history.get(runId);
      if (!record) return undefined;
      const { code, backend, session } = record.run;
      return deps.personRuns.run({ code, backend, session, origin: 'command' });
    },
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
