// input() in an agent's run, through a real MCP client over stdio: a client that declares elicitation is
// asked and its answer goes back to Python; a client that does not gets a clear EOFError at once.
import { after, before, describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { BACKEND_KINDS } from '../../src/engine/types';
import { jupyterCliArgs } from '../support/jupyter';
import { connectStdio, runPython, type StdioConnection } from '../support/mcp';

for (const backend of BACKEND_KINDS) {
  describe(`input() over MCP on the ${backend} backend`, () => {
    let asking: StdioConnection;
    let silent: StdioConnection;
    const questions: string[] = [];

    before(async () => {
      asking = await connectStdio(['--backend', backend, ...jupyterCliArgs(backend)], {}, { elicitation: {} });
      asking.client.setRequestHandler(ElicitRequestSchema, async (request) => {
        questions.push(request.params.message);
        return { action: 'accept', content: { answer: 'Ada' } };
      });
      silent = await connectStdio(['--backend', backend, ...jupyterCliArgs(backend)]);
    });
    after(async () => {
      await asking?.close();
      await silent?.close();
    });

    test('a client with elicitation is asked, and the answer reaches Python', async () => {
      const { result } = await runPython(asking.client, { code: 'name = input("name? ")\nprint("hello", name)' });
      assert.equal(result.stdout, 'name? Ada\nhello Ada\n', JSON.stringify(result.diagnostics));
      assert.deepEqual(questions, ['name?']);
    });

    test('getpass is refused over MCP: elicitation must not ask for secrets', async () => {
      const { result } = await runPython(asking.client, { code: 'import getpass\ngetpass.getpass()' });
      assert.equal(result.diagnostics?.exception, 'EOFError');
      assert.match(result.diagnostics?.message ?? '', /getpass\(\) cannot ask through MCP/);
    });

    test('a client without elicitation gets an EOFError that says why, instead of a question nobody sees', async () => {
      const { result } = await runPython(silent.client, { code: 'input("name? ")' });
      assert.equal(result.diagnostics?.exception, 'EOFError');
      assert.match(result.diagnostics?.message ?? '', /input\(\) has nobody to answer it/);
    });
  });
}
