// npm run bench -- --tokens: what an agent's model reads, in tokens (o200k), for one real multi-tool task done two
// ways against real MCP servers (the filesystem and memory servers from npm): 20 notes read and turned into people,
// projects and the relations between them in a memory graph.
//   * direct: a careful agent with both servers' tools, batching where the tools allow (list the folder, read every
//     note in one call, create all entities in one call, all relations in one, read the graph back to check);
//   * code mode: an agent with this server's tools, which looks the tools up from Python once, then does the whole
//     task in one run_python.
// Every tool call is made for real and its real result goes into the transcript. A model's input at a turn is what
// it reads then: the instructions, the tool list, the task and everything said and returned so far; the figure is
// the sum over the turns. The model's own words are the tool calls as JSON (the same for any model), and its final
// answer is left out (the same both ways). Both ways must end with the same graph.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const SYSTEM = 'You are a coding agent. Use the tools to do the task, then say briefly what you did.';
const TASK =
  'The folder {dir} holds 20 notes. Build a knowledge graph in the memory server: every person and every project ' +
  'the notes name as entities (entityType "person" or "project", the note as an observation of the person), and ' +
  'a "works_on" relation from each person to their project.';

const PEOPLE = [
  'Ada Lovelace',
  'Alan Turing',
  'Grace Hopper',
  'Katherine Johnson',
  'Edsger Dijkstra',
  'Barbara Liskov',
  'Donald Knuth',
  'Margaret Hamilton',
  'John Backus',
  'Frances Allen',
  'Dennis Ritchie',
  'Ken Thompson',
  'Radia Perlman',
  'Tim Berners-Lee',
  'Shafi Goldwasser',
  'Leslie Lamport',
  'Hedy Lamarr',
  'Claude Shannon',
  'Annie Easley',
  'Niklaus Wirth',
];
const PROJECTS = ['Analytical Engine', 'Bombe', 'COBOL', 'Apollo Guidance', 'Pascal'];

interface Note {
  file: string;
  person: string;
  project: string;
  text: string;
}

function notes(): Note[] {
  return PEOPLE.map((person, i) => {
    const project = PROJECTS[i % PROJECTS.length]!;
    const text =
      `Meeting note ${i + 1}. ${person} works on ${project}. ` +
      `Discussed the schedule for the next milestone, open questions on testing, and who reviews the design. ` +
      `Follow-up next week; ${person.split(' ')[0]} will send a summary to the team.`;
    return { file: `note-${String(i + 1).padStart(2, '0')}.md`, person, project, text };
  });
}

/** What the model reads: messages as a chat API sends them, tools as their JSON declarations. */
class Transcript {
  private readonly messages: string[] = [];
  private readonly perTurn: number[] = [];

  constructor(private readonly preamble: string) {}

  /** The model reads everything so far and answers with `call` (a tool call as JSON), then reads its result. */
  turn(call: object, result: CallToolResult): void {
    this.perTurn.push(tokens(this.preamble + this.messages.join('\n')));
    this.messages.push(JSON.stringify(call));
    this.messages.push(resultText(result));
  }

  /** The last turn: the model reads everything and answers in words (not counted). */
  end(): { turns: number; input: number } {
    this.perTurn.push(tokens(this.preamble + this.messages.join('\n')));
    return { turns: this.perTurn.length, input: this.perTurn.reduce((sum, n) => sum + n, 0) };
  }
}

function tokens(text: string): number {
  return encode(text).length;
}

/** A tool result as hosts hand it to a model: its text content in order (an image would be counted apart). */
function resultText(result: CallToolResult): string {
  return result.content.map((item) => (item.type === 'text' ? item.text : `[${item.type}]`)).join('\n');
}

function toolList(tools: Tool[]): string {
  return JSON.stringify(tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })));
}

async function connect(command: string, args: string[], env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'token-bench', version: '1' });
  await client.connect(
    new StdioClientTransport({
      command,
      args,
      env: { ...(process.env as Record<string, string>), ...env },
      stderr: 'ignore',
    }),
  );
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
}

function graphOf(file: string): string[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .map((item) =>
      item.type === 'relation' ? `${item.from} -${item.relationType}-> ${item.to}` : `${item.name}:${item.entityType}`,
    )
    .sort();
}

export async function measureTokens(root: string): Promise<void> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'code-mode-token-bench-'));
  const dir = path.join(work, 'notes');
  fs.mkdirSync(dir);
  const all = notes();
  for (const note of all) fs.writeFileSync(path.join(dir, note.file), note.text);
  const server = (pkg: string) => path.join(root, 'node_modules', '@modelcontextprotocol', pkg, 'dist', 'index.js');
  const task = TASK.replace('{dir}', dir);
  const entities = [
    ...all.map((note) => ({ name: note.person, entityType: 'person', observations: [note.text] })),
    ...PROJECTS.map((project) => ({ name: project, entityType: 'project', observations: [] })),
  ];
  const relations = all.map((note) => ({ from: note.person, to: note.project, relationType: 'works_on' }));
  try {
    // Direct: both servers' tools in the model's context, every step a call.
    const directGraph = path.join(work, 'direct.jsonl');
    const files = await connect(process.execPath, [server('server-filesystem'), dir]);
    const memory = await connect(process.execPath, [server('server-memory')], { MEMORY_FILE_PATH: directGraph });
    const directTools = [...(await files.listTools()).tools, ...(await memory.listTools()).tools];
    const direct = new Transcript(`${SYSTEM}\n${toolList(directTools)}\n${task}\n`);
    const listing = { name: 'list_directory', arguments: { path: dir } };
    direct.turn(listing, await call(files, listing.name, listing.arguments));
    const reading = { name: 'read_multiple_files', arguments: { paths: all.map((note) => path.join(dir, note.file)) } };
    direct.turn(reading, await call(files, reading.name, reading.arguments));
    const creating = { name: 'create_entities', arguments: { entities } };
    direct.turn(creating, await call(memory, creating.name, creating.arguments));
    const relating = { name: 'create_relations', arguments: { relations } };
    direct.turn(relating, await call(memory, relating.name, relating.arguments));
    const checking = { name: 'read_graph', arguments: {} };
    direct.turn(checking, await call(memory, checking.name, checking.arguments));
    const directTotal = direct.end();
    await files.close();
    await memory.close();

    // Code mode: this server's tools only; the others are reached from Python.
    const codeGraph = path.join(work, 'code-mode.jsonl');
    const servers = path.join(work, 'servers.json');
    fs.writeFileSync(
      servers,
      JSON.stringify({
        servers: {
          filesystem: { command: process.execPath, args: [server('server-filesystem'), dir] },
          memory: { command: process.execPath, args: [server('server-memory')], env: { MEMORY_FILE_PATH: codeGraph } },
        },
      }),
    );
    const ours = await connect(process.execPath, [
      path.join(root, 'dist', 'cli.js'),
      '--storage',
      path.join(work, 'storage'),
      '--servers',
      servers,
      '--tool-approval',
      'allow',
    ]);
    const codeMode = new Transcript(`${SYSTEM}\n${toolList((await ours.listTools()).tools)}\n${task}\n`);
    const lookup = {
      name: 'run_python',
      arguments: {
        code: 'from code_mode import tools\nprint(tools.search("read files directory entities relations graph"))',
      },
    };
    codeMode.turn(lookup, await call(ours, lookup.name, lookup.arguments));
    const program = [
      'import re',
      'from code_mode import tools',
      `folder = ${JSON.stringify(dir)}`,
      'def text_of(result):',
      '    return result if isinstance(result, str) else result.get("content", "")',
      'listing = text_of(tools.filesystem.list_directory(path=folder))',
      'names = sorted(line[7:] for line in listing.splitlines() if line.startswith("[FILE] "))',
      'people, projects, relations = [], set(), []',
      'for name in names:',
      '    text = text_of(tools.filesystem.read_text_file(path=folder + "/" + name))',
      '    m = re.search(r"\\. (.+?) works on (.+?)\\. ", text)',
      '    person, project = m.group(1), m.group(2)',
      '    people.append({"name": person, "entityType": "person", "observations": [text]})',
      '    projects.add(project)',
      '    relations.append({"from": person, "to": project, "relationType": "works_on"})',
      'tools.memory.create_entities(entities=people + [{"name": p, "entityType": "project", "observations": []} for p in sorted(projects)])',
      'tools.memory.create_relations(relations=relations)',
      'graph = tools.memory.read_graph()',
      'print(len(graph["entities"]), "entities,", len(graph["relations"]), "relations")',
    ].join('\n');
    const doing = { name: 'run_python', arguments: { code: program, timeout_s: 120 } };
    const done = await call(ours, doing.name, doing.arguments);
    if (done.isError) throw new Error(`the code-mode run failed: ${resultText(done)}`);
    codeMode.turn(doing, done);
    const codeTotal = codeMode.end();
    await ours.close();

    const same = JSON.stringify(graphOf(directGraph)) === JSON.stringify(graphOf(codeGraph));
    console.log(
      "\nInput tokens an agent's model reads for one task (o200k), summed over its turns: 20 notes → a memory graph",
    );
    console.log('| way | tool calls | model turns | input tokens | |');
    console.log('|---|---|---|---|---|');
    console.log(`| direct, both servers' tools | 5 | ${directTotal.turns} | ${directTotal.input} | |`);
    console.log(
      `| code mode, run_python | 2 | ${codeTotal.turns} | ${codeTotal.input} | ${(100 - (100 * codeTotal.input) / directTotal.input).toFixed(1)} % fewer |`,
    );
    console.log(`same graph both ways: ${same ? 'yes' : 'NO'} (${graphOf(codeGraph).length} entities and relations)`);
    if (!same) process.exitCode = 1;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
