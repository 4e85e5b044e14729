import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import { checkPolicy, defaultPolicy, importedModules } from '../../src/engine/policy';

test('imports are found in every common form', () => {
  const code = [
    'import os, sys as system',
    'import xml.etree.ElementTree as ET',
    'from urllib.request import urlopen',
    '  from . import sibling',
    "m = __import__('socket')",
    "importlib.import_module('subprocess')",
    '# import commented_out',
  ].join('\n');
  assert.deepEqual(importedModules(code).sort(), ['os', 'socket', 'subprocess', 'sys', 'urllib', 'xml']);
});

test('the default policy only limits size', () => {
  assert.equal(checkPolicy('import socket\nprint(1)', defaultPolicy), undefined);
  const big = 'x = 1\n'.repeat(50_000);
  assert.deepEqual(checkPolicy(big, defaultPolicy)?.rule, 'max_code_bytes');
});

test('each rule is named in the violation', () => {
  const policy = {
    ...defaultPolicy,
    maxCodeLines: 2,
    denyImports: ['socket'],
    allowImports: [],
    deniedTokens: ['eval('],
  };
  assert.equal(checkPolicy('a\nb\nc', policy)?.rule, 'max_code_lines');
  assert.equal(checkPolicy('import socket', policy)?.rule, 'deny_imports');
  assert.equal(checkPolicy('eval("1")', policy)?.rule, 'denied_token');
  const allow = { ...defaultPolicy, allowImports: ['math', 'json'] };
  assert.equal(checkPolicy('import math, json', allow), undefined);
  const violation = checkPolicy('import math\nfrom os import path', allow);
  assert.equal(violation?.rule, 'allow_imports');
  assert.match(violation?.detail ?? '', /"os"/);
});
