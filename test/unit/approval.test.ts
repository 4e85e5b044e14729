// The tool-approval policy (engine/codemode/approval.ts): which calls from code go ahead, which wait for a
// person, which are refused, and what the audit calls each.
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import {
  answerDecision,
  decideApproval,
  defaultApprovalPolicy,
  nobodyToAsk,
  parseToolPatterns,
  type ApprovalPolicy,
  type ToolCallFacts,
} from '../../src/engine/codemode/approval';

const write: ToolCallFacts = {
  server: 'memory',
  tool: 'create_entities',
  readOnly: false,
  confirmsItself: false,
  origin: 'mcp',
  sessionAllowed: false,
};
const policy = (changes: Partial<ApprovalPolicy> = {}): ApprovalPolicy => ({ ...defaultApprovalPolicy, ...changes });

test("the default is ask: an agent's call to a tool not marked read-only waits for a person", () => {
  assert.equal(defaultApprovalPolicy.mode, 'ask');
  assert.deepEqual(decideApproval(policy(), write), { kind: 'ask' });
  assert.deepEqual(decideApproval(policy(), { ...write, origin: 'cli' }), { kind: 'ask' });
  assert.deepEqual(
    decideApproval(policy(), { ...write, origin: 'generate' }),
    { kind: 'ask' },
    "generated code is a model's, not the person's",
  );
  assert.deepEqual(decideApproval(policy(), { ...write, origin: undefined }), { kind: 'ask' });
});

test('read-only tools go ahead in every mode, without a question', () => {
  for (const mode of ['ask', 'allow', 'readonly'] as const) {
    assert.deepEqual(decideApproval(policy({ mode }), { ...write, tool: 'read_graph', readOnly: true }), {
      kind: 'allow',
      approval: 'read-only',
    });
  }
});

test('allow never asks; readonly refuses writes without asking and names the setting and the rule to add', () => {
  assert.deepEqual(decideApproval(policy({ mode: 'allow' }), write), { kind: 'allow', approval: 'policy-allow' });
  const refused = decideApproval(
    policy({
      mode: 'readonly',
      names: { mode: 'setting codeMode.tools.approval', autoApprove: 'setting codeMode.tools.autoApprove' },
    }),
    write,
  );
  assert.equal(refused.kind, 'refuse');
  assert.match(
    refused.kind === 'refuse' ? refused.reason : '',
    /memory\.create_entities is not marked read-only.*"readonly" \(setting codeMode\.tools\.approval\).*"memory\.create_entities" in setting codeMode\.tools\.autoApprove/,
  );
  assert.equal(
    decideApproval(policy({ mode: 'readonly' }), { ...write, origin: 'command' }).kind,
    'refuse',
    "a person's own run does not override readonly",
  );
});

test('autoApprove rules (server.tool, server.*) allow in every mode; other tools are unaffected', () => {
  for (const mode of ['ask', 'readonly'] as const) {
    assert.deepEqual(decideApproval(policy({ mode, autoApprove: ['memory.create_entities'] }), write), {
      kind: 'allow',
      approval: 'rule',
    });
    assert.deepEqual(decideApproval(policy({ mode, autoApprove: ['memory.*'] }), write), {
      kind: 'allow',
      approval: 'rule',
    });
  }
  assert.deepEqual(decideApproval(policy({ autoApprove: ['memory.delete_entities', 'other.*'] }), write), {
    kind: 'ask',
  });
});

test("a person's own runs count as approved unless approvePersonRuns is off; agents' runs always follow the policy", () => {
  for (const origin of ['command', 'explorer'] as const) {
    assert.deepEqual(decideApproval(policy(), { ...write, origin }), { kind: 'allow', approval: 'policy-allow' });
    assert.deepEqual(decideApproval(policy({ approvePersonRuns: false }), { ...write, origin }), { kind: 'ask' });
  }
  assert.deepEqual(decideApproval(policy(), { ...write, origin: 'mcp' }), { kind: 'ask' });
});

test('a tool allowed for the session, and a provider that confirms calls itself, need no question under ask', () => {
  assert.deepEqual(decideApproval(policy(), { ...write, sessionAllowed: true }), {
    kind: 'allow',
    approval: 'session-allowed',
  });
  assert.deepEqual(decideApproval(policy(), { ...write, server: 'vscode', confirmsItself: true }), {
    kind: 'allow',
    approval: 'policy-allow',
  });
  assert.equal(decideApproval(policy({ mode: 'readonly' }), { ...write, sessionAllowed: true }).kind, 'refuse');
});

test('answers: once and session allow (asked-allowed), deny refuses naming the tool; nobody to ask names the flags', () => {
  assert.deepEqual(answerDecision('once', 'memory', 'create_entities'), { kind: 'allow', approval: 'asked-allowed' });
  assert.deepEqual(answerDecision('session', 'memory', 'create_entities'), {
    kind: 'allow',
    approval: 'asked-allowed',
  });
  const denied = answerDecision('deny', 'memory', 'create_entities');
  assert.equal(denied.kind, 'refuse');
  assert.match(denied.kind === 'refuse' ? denied.reason : '', /declined the call to memory\.create_entities/);
  const cliNames = { mode: 'flag --tool-approval', autoApprove: 'flag --auto-approve' };
  assert.match(
    nobodyToAsk(policy({ names: cliNames }), 'memory', 'create_entities'),
    /does not support elicitation.*flag --tool-approval to "allow".*"memory\.create_entities" \(or "memory\.\*"\) in flag --auto-approve/,
  );
  // The engine alone names no front end's flags or settings.
  assert.doesNotMatch(nobodyToAsk(defaultApprovalPolicy, 'memory', 'create_entities'), /--|codeMode\./);
});

test('--auto-approve entries are server.tool or server.*', () => {
  assert.deepEqual(parseToolPatterns('memory.create_entities, files.*,,'), ['memory.create_entities', 'files.*']);
  assert.deepEqual(parseToolPatterns(''), []);
  assert.deepEqual(parseToolPatterns('a.b.c'), ['a.b.c'], 'server names may hold dots');
  for (const bad of ['memory', '.tool', 'memory.', 'a b.c'])
    assert.ok('error' in (parseToolPatterns(bad) as object), bad);
});
