// The results page: one card per Python run, newest on top, updated live from the extension host's messages.
// An open tool form sits among the runs where it was opened, so newer runs come above it.
import { RunCardView, type CardHost } from './cards';
import { restyleFrames } from './displays';
import { button, el } from './dom';
import type { HostToPageMessage, PageToHostMessage, RunCard, ToolFormSpec } from './protocol';
import { ToolPanel } from './toolForm';

/** Cards kept on the page (and in the persisted state); the oldest beyond it are dropped. */
const MAX_CARDS = 100;
/**
 * Characters of display data kept on the page (and in the persisted state) across its cards: past it the oldest
 * cards' displays go, a note taking their place, so a long session does not pile up figures in memory.
 */
const MAX_DISPLAY_CHARS = 64 * 1024 * 1024;
/**
 * Characters of display data written to the persisted state, newest cards first: VS Code stores the state, and the
 * host's history replaces the cards once a reloaded page is ready, so large displays are not worth writing there.
 */
const MAX_SAVED_DISPLAY_CHARS = 2 * 1024 * 1024;
/** Streaming output changes the state many times a second; it is written at most this often. */
const SAVE_DELAY_MS = 500;
const STATE_VERSION = 1;
/** Scrolled no further than this from the top, the person is following the newest run; further, they are reading. */
const FOLLOW_SLACK_PX = 80;

interface VsCodeApi {
  postMessage(message: PageToHostMessage): void;
  getState(): unknown;
  setState(state: PersistedState): void;
}

interface PersistedState {
  version: number;
  /** Oldest first, like the host's `history` message. */
  cards: RunCard[];
  tool?: ToolFormSpec;
}

declare const acquireVsCodeApi: (() => VsCodeApi) | undefined;

// Outside VS Code (a plain browser loading the page for a test or a preview) there is no host to talk to:
// messages go nowhere and state lives only as long as the page.
const vscode: VsCodeApi =
  typeof acquireVsCodeApi === 'function'
    ? acquireVsCodeApi()
    : {
        postMessage() {},
        getState() {
          return undefined;
        },
        setState() {},
      };

const cards = new Map<string, RunCardView>();
const dirty = new Set<RunCardView>();
let flushScheduled = false;
let saveTimer: number | undefined;
let tickTimer: number | undefined;

const runsList = el('main', { className: 'runs', attrs: { 'aria-label': 'Python runs' } });
const onMac = /Mac/.test(navigator.userAgent);
const emptyState = el('div', { className: 'empty-state' }, [
  el('p', { className: 'empty-title', text: 'No Python runs yet' }),
  el('p', { className: 'empty-how' }, [
    'In a Python file, press ',
    el('kbd', { text: onMac ? 'Cmd+Alt+Enter' : 'Ctrl+Alt+Enter' }),
    ' to run the selection or the current line, or ▶ in the editor title to run the file.',
  ]),
  el('p', { text: "Copilot agent mode's runs appear here too, with their output, errors, figures and tables." }),
]);
const countLabel = el('span', { className: 'run-count' });
/** Shown while the person reads an older run and newer ones arrive above, out of sight: it takes them there. */
const newResults = button('', 'newer', 'new-results', 'Scroll to the newest run');
let unseenRuns = 0;
const clearButton = button('Clear', 'clear', 'toolbar-button', 'Clear all runs');
const toolPanel = new ToolPanel((message) => vscode.postMessage(message), scheduleSave);

const cardHost: CardHost = {
  post: (message) => vscode.postMessage(message),
  scheduleFlush(card) {
    dirty.add(card);
    if (flushScheduled) return;
    flushScheduled = true;
    requestAnimationFrame(() => {
      flushScheduled = false;
      for (const c of dirty) c.flush();
      dirty.clear();
    });
  },
  changed: scheduleSave,
};

function scheduleSave(): void {
  if (saveTimer !== undefined) return;
  saveTimer = window.setTimeout(saveNow, SAVE_DELAY_MS);
}

function saveNow(): void {
  window.clearTimeout(saveTimer);
  saveTimer = undefined;
  // The map holds cards in insertion order, which is oldest first.
  vscode.setState({
    version: STATE_VERSION,
    cards: savedModels([...cards.values()].map((c) => c.model)),
    ...(toolPanel.spec ? { tool: toolPanel.spec } : {}),
  });
}

/** The cards as persisted: the newest ones' displays while they fit MAX_SAVED_DISPLAY_CHARS, a note instead of the rest. */
function savedModels(models: RunCard[]): RunCard[] {
  let room = MAX_SAVED_DISPLAY_CHARS;
  return models
    .reverse()
    .map((model) => {
      const chars = model.displays.reduce((sum, display) => sum + display.data.length, 0);
      if (chars <= room) {
        room -= chars;
        return model;
      }
      const before = model.displaysDropped;
      const displaysDropped = {
        count: (before?.count ?? 0) + model.displays.length,
        bytes: (before?.bytes ?? 0) + chars,
        reason: 'large displays are not kept when the view reloads',
      };
      return { ...model, displays: [], displaysDropped };
    })
    .reverse();
}

function updateChrome(): void {
  const count = cards.size;
  countLabel.textContent = count === 1 ? '1 run' : `${count} runs`;
  clearButton.disabled = count === 0;
  emptyState.hidden = count > 0;
  const anyRunning = [...cards.values()].some((c) => c.running);
  if (anyRunning && tickTimer === undefined) {
    tickTimer = window.setInterval(() => {
      const now = Date.now();
      for (const card of cards.values()) card.tick(now);
    }, 1000);
  } else if (!anyRunning && tickTimer !== undefined) {
    window.clearInterval(tickTimer);
    tickTimer = undefined;
  }
}

function addCard(model: RunCard): void {
  // A run the page already shows (a replayed start) is replaced and moves to the top.
  const existing = cards.get(model.run.runId);
  if (existing) {
    existing.root.remove();
    dirty.delete(existing);
    cards.delete(existing.runId);
  }
  const card = new RunCardView(model, cardHost);
  cards.set(card.runId, card);
  runsList.prepend(card.root);
  for (const [runId, old] of cards) {
    if (cards.size <= MAX_CARDS) break;
    old.root.remove();
    dirty.delete(old);
    cards.delete(runId);
  }
}

/** `count` runs arrived above the one being read; 0 hides the marker. */
function showNewResults(count: number): void {
  unseenRuns = count;
  newResults.hidden = count === 0;
  const label = count === 1 ? '1 new result' : `${count} new results`;
  newResults.querySelector('.label')?.remove();
  if (count > 0) newResults.append(el('span', { className: 'label', text: label }));
}

function clearCards(): void {
  showNewResults(0);
  for (const card of cards.values()) card.root.remove();
  cards.clear();
  dirty.clear();
}

function handle(message: HostToPageMessage): void {
  switch (message.type) {
    // A queued run's card comes at once; its start replaces it with a running one.
    case 'runQueued':
    case 'runStarted': {
      // Read before the card is added: the card's height would count as scrolling.
      const following = window.scrollY <= FOLLOW_SLACK_PX;
      addCard({ run: message.run, stdout: '', stderr: '', displays: [] });
      // Someone reading an older run keeps their place (the browser's scroll anchoring holds it), and is told.
      if (following) window.scrollTo({ top: 0 });
      else showNewResults(unseenRuns + 1);
      break;
    }
    // Events for a run the page has no card for are dropped: the host replays `history` on `ready`, so only
    // runs already pushed out of the bounded history can be unknown.
    case 'runOutput':
      cards.get(message.runId)?.appendOutput(message.stream, message.text);
      return;
    case 'runDisplay':
      cards.get(message.runId)?.addDisplay(message.display);
      boundDisplays();
      return;
    case 'runFinished':
      cards.get(message.runId)?.finish(message.result);
      break;
    case 'history':
      clearCards();
      for (const run of message.runs.slice(-MAX_CARDS)) addCard(run);
      // The page has just loaded: a form restored from its state was the last thing opened.
      if (toolPanel.spec) runsList.prepend(toolPanel.root);
      // A reloaded page starts at the newest run, not where a scroll position restored from before left it.
      window.scrollTo({ top: 0 });
      showNewResults(0);
      break;
    case 'reveal':
      cards.get(message.runId)?.reveal();
      return;
    case 'interrupting':
      cards.get(message.runId)?.markInterrupting();
      return;
    case 'toolForm':
      showToolForm(message.tool);
      return;
    case 'toolResult':
      toolPanel.showResult(message.requestId, message.ok, message.content);
      return;
    case 'clear':
      clearCards();
      break;
    case 'probe':
      vscode.postMessage({
        type: 'probeResult',
        requestId: message.requestId,
        cards: [...cards.values()].map((card) => ({
          runId: card.runId,
          status: card.root.dataset.status ?? '',
          text: card.root.innerText,
        })),
      });
      return;
    default:
      return;
  }
  boundDisplays();
  updateChrome();
  scheduleSave();
}

/** Lets go of the oldest cards' displays until the page holds at most MAX_DISPLAY_CHARS of them; the newest card keeps its own. */
function boundDisplays(): void {
  const all = [...cards.values()];
  let total = all.reduce((sum, card) => sum + card.displayChars, 0);
  for (const card of all.slice(0, -1)) {
    if (total <= MAX_DISPLAY_CHARS) return;
    total -= card.displayChars;
    card.dropDisplays(
      `this view keeps the displays of recent runs only (${MAX_DISPLAY_CHARS / (1024 * 1024)} MB in all)`,
    );
  }
}

/** The form goes on top of the runs so far; runs started after it come above it. */
function showToolForm(tool: ToolFormSpec): void {
  // In the document before show(), which focuses its first field.
  runsList.prepend(toolPanel.root);
  toolPanel.show(tool);
  toolPanel.root.scrollIntoView({ block: 'nearest' });
}

function restore(): void {
  const state = vscode.getState() as Partial<PersistedState> | undefined;
  if (state?.version !== STATE_VERSION) return;
  for (const card of state.cards ?? []) addCard(card);
  if (state.tool) showToolForm(state.tool);
}

function mount(): void {
  clearButton.addEventListener('click', () => {
    clearCards();
    updateChrome();
    saveNow();
    vscode.postMessage({ type: 'clear' });
  });
  newResults.addEventListener('click', () => {
    showNewResults(0);
    window.scrollTo({ top: 0 });
  });
  // Back at the top by their own scrolling, the person sees the new runs: the marker has done its job.
  window.addEventListener(
    'scroll',
    () => {
      if (unseenRuns > 0 && window.scrollY <= FOLLOW_SLACK_PX) showNewResults(0);
    },
    { passive: true },
  );
  showNewResults(0);
  const app = document.getElementById('app') ?? document.body;
  app.replaceChildren(
    el('header', { className: 'toolbar' }, [
      el('span', { className: 'toolbar-title', text: 'Python runs' }),
      countLabel,
      clearButton,
    ]),
    newResults,
    emptyState,
    runsList,
  );

  // VS Code switches themes by changing the body class and the variables on <html>; frames need new colours.
  let restyleQueued = false;
  const observer = new MutationObserver(() => {
    if (restyleQueued) return;
    restyleQueued = true;
    requestAnimationFrame(() => {
      restyleQueued = false;
      restyleFrames();
    });
  });
  observer.observe(document.body, { attributes: true, attributeFilter: ['class'] });
  observer.observe(document.documentElement, { attributes: true, attributeFilter: ['style'] });

  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    const data = event.data;
    if (typeof data === 'object' && data !== null && typeof (data as { type?: unknown }).type === 'string')
      handle(data as HostToPageMessage);
  });

  restore();
  updateChrome();
  vscode.postMessage({ type: 'ready' });
}

mount();
