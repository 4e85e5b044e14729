// The tool form in the results page (Chromium): fields from a tool's input schema, validation next to each field,
// and the typed invokeTool the host accepts, then the tool's result.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { parsePageMessage } from '../../src/webview/protocol';
import { openPage, outDir, post, sent, useResultsPage, waitForText } from './resultsPage';

useResultsPage();

describe('the tool form in Chromium', () => {
  test('the tool form renders fields from the schema, validates, and posts invokeTool with typed args', async () => {
    const { page, errors } = await openPage();
    await post(page, {
      type: 'toolForm',
      tool: {
        server: 'weather',
        name: 'forecast',
        description: 'Daily forecast for a city.',
        inputSchema: {
          type: 'object',
          properties: {
            city: { type: 'string', description: 'City name' },
            days: { type: 'integer', default: 3, minimum: 1, maximum: 14 },
            threshold: { type: 'number' },
            metric: { type: 'boolean', default: true },
            alerts: { type: 'boolean' },
            detail: { enum: ['summary', 'hourly', 'full'], default: 'summary' },
            coords: { type: 'object', description: 'lat/lon' },
            fields: { type: 'array', items: { type: 'string' } },
            stations: {
              type: 'array',
              items: {
                type: 'object',
                properties: { id: { type: 'string' }, height: { type: 'number' } },
                required: ['id'],
              },
            },
          },
          required: ['city'],
        },
      },
    });
    await page.waitForSelector('.tool-panel:not([hidden]) form');
    const kinds = await page.$$eval('.tool-form [data-kind]', (nodes) =>
      nodes.map((n) => `${(n as HTMLInputElement).name}:${n.getAttribute('data-kind')}:${n.tagName.toLowerCase()}`),
    );
    assert.deepEqual(kinds, [
      'city:string:input',
      'days:integer:input',
      'threshold:number:input',
      'metric:boolean:input',
      'alerts:boolean:input',
      'detail:enum:select',
      'coords:json:textarea',
      'fields:json:textarea',
      'stations:json:textarea',
    ]);
    assert.equal(await page.textContent('.tool-name'), 'weather›forecast');
    // A JSON value shows the shape it needs and an example, not a bare box.
    assert.equal(
      await page.textContent('.field:has([name="stations"]) .field-shape'),
      '[{id: string, height?: number}]',
    );
    assert.equal(
      await page.getAttribute('[name="stations"]', 'placeholder'),
      JSON.stringify([{ id: '', height: 0 }], null, 2),
    );

    // Missing required value and bad JSON are reported next to their fields, and nothing is sent.
    await page.fill('[name="coords"]', '{ not json');
    await page.click('.tool-form button[type="submit"]');
    assert.equal(await page.textContent('.field-string .field-error'), 'required');
    assert.match((await page.textContent('.field-json .field-error')) ?? '', /^invalid JSON/);
    assert.ok(!(await sent(page)).some((m) => m.type === 'invokeTool'));

    await page.fill('[name="city"]', 'Lisbon');
    await page.fill('[name="days"]', '5');
    await page.fill('[name="threshold"]', '0.25');
    await page.selectOption('[name="detail"]', { label: 'hourly' });
    await page.check('[name="alerts"]');
    await page.fill('[name="coords"]', '{"lat": 38.7, "lon": -9.1}');
    await page.fill('[name="fields"]', '["temp", "rain"]');
    await page.click('.tool-form button[type="submit"]');
    const invoke = (await sent(page)).find((m) => m.type === 'invokeTool');
    assert.ok(invoke && invoke.type === 'invokeTool');
    assert.deepEqual(parsePageMessage(invoke), invoke, 'the host validator accepts what the form sends');
    assert.equal(invoke.server, 'weather');
    assert.equal(invoke.name, 'forecast');
    assert.deepEqual(invoke.args, {
      city: 'Lisbon',
      days: 5,
      threshold: 0.25,
      metric: true,
      alerts: true,
      detail: 'hourly',
      coords: { lat: 38.7, lon: -9.1 },
      fields: ['temp', 'rain'],
    });
    assert.ok(await page.isDisabled('.tool-form button[type="submit"]'), 'one request at a time');

    await post(page, { type: 'toolResult', requestId: 'someone-else', ok: true, content: 'ignored' });
    await post(page, {
      type: 'toolResult',
      requestId: invoke.requestId,
      ok: true,
      content: [{ type: 'text', text: 'Sunny, 24 °C' }],
    });
    await waitForText(page, '.tool-result', 'Sunny, 24 °C');
    assert.ok(!((await page.textContent('.tool-result')) ?? '').includes('ignored'));
    assert.ok(await page.isEnabled('.tool-form button[type="submit"]'));
    await page.screenshot({ path: path.join(outDir, 'webview-tool-form.png'), fullPage: true });

    await page.click('.tool-panel .icon-button');
    assert.ok(await page.isHidden('.tool-panel'));
    assert.deepEqual(errors, []);
  });
});
