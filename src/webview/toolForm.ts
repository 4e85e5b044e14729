// A form generated from a tool's JSON schema: typed inputs for strings, numbers, integers, booleans and enums,
// a JSON textarea for everything else. The schema comes from an MCP server, so it is read defensively.
import { button, el } from './dom';
import { exampleOf, shapeOf } from './schemaShape';
import type { PageToHostMessage, ToolFormSpec } from './protocol';
import { PendingRequests } from '../engine/browser';

type Schema = Record<string, unknown>;
type FieldKind = 'string' | 'text' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';
type Scalar = string | number | boolean | null;

/** Argument names whose values are usually several lines long get a textarea rather than a one-line input. */
const MULTILINE_NAMES = /^(code|content|text|body|source|script|prompt|sql|markdown)$/i;
const IMAGE_MIMES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

function asSchema(value: unknown): Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Schema) : {};
}

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** The first non-null type of `type: "x"` or `type: ["x", "null"]`. */
function schemaType(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((t): t is string => typeof t === 'string' && t !== 'null');
  return undefined;
}

function fieldKind(name: string, schema: Schema): FieldKind {
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(isScalar)) return 'enum';
  switch (schemaType(schema)) {
    case 'string':
      return MULTILINE_NAMES.test(name) ? 'text' : 'string';
    case 'number':
      return 'number';
    case 'integer':
      return 'integer';
    case 'boolean':
      return 'boolean';
    default:
      return 'json';
  }
}

type ReadResult = { value?: unknown; error?: string };

interface Field {
  name: string;
  root: HTMLElement;
  errorLine: HTMLElement;
  input: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement;
  /** The value to send, nothing when the field was left empty, or why the input is not acceptable. */
  read(): ReadResult;
}

function buildField(name: string, schema: Schema, required: boolean): Field {
  const kind = fieldKind(name, schema);
  const id = `tool-field-${name.replace(/[^\w-]/g, '_')}`;
  const def = schema.default;
  let input: Field['input'];
  let read: () => ReadResult;
  /** For JSON values: the fields and types the schema asks for, shown above the box. */
  let shape: string | undefined;

  switch (kind) {
    case 'string':
    case 'text': {
      const node =
        kind === 'text'
          ? el('textarea', { attrs: { rows: '4', spellcheck: 'false' } })
          : el('input', { attrs: { type: 'text' } });
      if (typeof def === 'string') node.value = def;
      input = node;
      read = () => (node.value === '' ? {} : { value: node.value });
      break;
    }
    case 'number':
    case 'integer': {
      const node = el('input', { attrs: { type: 'number', step: kind === 'integer' ? '1' : 'any' } });
      if (typeof schema.minimum === 'number') node.min = String(schema.minimum);
      if (typeof schema.maximum === 'number') node.max = String(schema.maximum);
      if (typeof def === 'number') node.value = String(def);
      input = node;
      read = () => {
        const text = node.value.trim();
        if (text === '') return node.validity.badInput ? { error: 'not a number' } : {};
        const value = Number(text);
        if (!Number.isFinite(value)) return { error: 'not a number' };
        if (kind === 'integer' && !Number.isInteger(value)) return { error: 'must be a whole number' };
        return { value };
      };
      break;
    }
    case 'boolean': {
      const node = el('input', { attrs: { type: 'checkbox' } });
      node.checked = def === true;
      // An optional flag without a default is sent only once the person has touched it.
      let touched = required || typeof def === 'boolean';
      node.addEventListener('change', () => (touched = true));
      input = node;
      read = () => (touched ? { value: node.checked } : {});
      break;
    }
    case 'enum': {
      const values = (schema.enum as Scalar[]).slice();
      const node = el('select');
      if (!required || def === undefined)
        node.append(el('option', { text: required ? 'Choose…' : '(not set)', attrs: { value: '' } }));
      values.forEach((value, index) =>
        node.append(
          el('option', {
            text: typeof value === 'string' ? value : JSON.stringify(value),
            attrs: { value: String(index) },
          }),
        ),
      );
      const defIndex = values.findIndex((value) => value === def);
      node.value = defIndex >= 0 ? String(defIndex) : '';
      input = node;
      read = () => (node.value === '' ? {} : { value: values[Number(node.value)] });
      break;
    }
    case 'json': {
      const type = schemaType(schema);
      // The example, not a bare bracket: what the value should look like, ready to edit.
      const example = JSON.stringify(exampleOf(schema), null, 2);
      const node = el('textarea', {
        className: 'json',
        attrs: {
          rows: String(Math.min(8, Math.max(3, example.split('\n').length))),
          spellcheck: 'false',
          placeholder: example,
        },
      });
      if (def !== undefined) node.value = JSON.stringify(def, null, 2);
      shape = shapeOf(schema);
      input = node;
      read = () => {
        if (node.value.trim() === '') return {};
        let value: unknown;
        try {
          value = JSON.parse(node.value);
        } catch (error) {
          return { error: `invalid JSON: ${(error as Error).message}` };
        }
        if (type === 'array' && !Array.isArray(value)) return { error: 'must be a JSON array' };
        if (type === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value)))
          return { error: 'must be a JSON object' };
        return { value };
      };
      break;
    }
  }

  input.id = id;
  input.name = name;
  input.dataset.kind = kind;
  if (required) input.required = kind !== 'boolean';
  const title = typeof schema.title === 'string' ? schema.title : '';
  // A checkbox sits inside its own label line; every other input goes below the label and description.
  const label = el('label', { className: 'field-label', attrs: { for: id } }, [
    ...(kind === 'boolean' ? [input] : []),
    el('span', { className: 'field-name', text: name }),
    ...(required ? [el('span', { className: 'field-required', text: 'required', attrs: { title: 'required' } })] : []),
    el('span', {
      className: 'field-type',
      text: kind === 'json' ? (schemaType(schema) ?? 'JSON') : kind === 'text' ? 'string' : kind,
    }),
  ]);
  const description = [title, typeof schema.description === 'string' ? schema.description : '']
    .filter(Boolean)
    .join(' — ');
  const errorLine = el('span', { className: 'field-error', attrs: { 'aria-live': 'polite' } });
  const root = el('div', { className: `field field-${kind}` }, [
    label,
    ...(description ? [el('span', { className: 'field-description', text: description })] : []),
    ...(shape
      ? [el('code', { className: 'field-shape', text: shape, attrs: { title: 'The shape of the value' } })]
      : []),
    ...(kind === 'boolean' ? [] : [input]),
    errorLine,
  ]);
  return { name, root, errorLine, input, read };
}

/** Renders a tool result: text, MCP content blocks (text and images), or any JSON value. */
function renderContent(content: unknown): HTMLElement[] {
  if (typeof content === 'string') return [el('pre', { className: 'tool-output', text: content })];
  if (
    Array.isArray(content) &&
    content.length > 0 &&
    content.every((block) => typeof asSchema(block).type === 'string')
  ) {
    return content.map((raw) => {
      const block = asSchema(raw);
      if (block.type === 'text' && typeof block.text === 'string')
        return el('pre', { className: 'tool-output', text: block.text });
      if (
        block.type === 'image' &&
        typeof block.data === 'string' &&
        typeof block.mimeType === 'string' &&
        IMAGE_MIMES.has(block.mimeType)
      ) {
        const img = el('img', { className: 'tool-image', attrs: { alt: 'tool result image' } });
        img.src = `data:${block.mimeType};base64,${block.data}`;
        return img;
      }
      return el('pre', { className: 'tool-output', text: JSON.stringify(block, null, 2) });
    });
  }
  if (content === undefined) return [el('p', { className: 'note', text: 'No content' })];
  return [el('pre', { className: 'tool-output', text: JSON.stringify(content, null, 2) })];
}

export class ToolPanel {
  readonly root = el('section', { className: 'tool-panel', attrs: { 'aria-label': 'Invoke tool' } });
  spec: ToolFormSpec | undefined;
  /** The form's invokeTool request waiting for its toolResult (one at a time). */
  private readonly requests = new PendingRequests<string, { ok: boolean; content: unknown }>();
  private requestCount = 0;
  private fields: Field[] = [];
  private submitButton: HTMLButtonElement | undefined;
  private resultBox: HTMLElement | undefined;

  constructor(
    private readonly post: (message: PageToHostMessage) => void,
    private readonly changed: () => void,
  ) {
    this.root.hidden = true;
  }

  show(spec: ToolFormSpec): void {
    this.spec = spec;
    this.requests.rejectAll(new Error('another tool form replaced this one'));
    const schema = asSchema(spec.inputSchema);
    const properties = asSchema(schema.properties);
    const required = new Set(
      Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [],
    );
    this.fields = Object.entries(properties).map(([name, property]) =>
      buildField(name, asSchema(property), required.has(name)),
    );

    const close = button('', 'close', 'icon-button', 'Close the tool form');
    close.addEventListener('click', () => this.hide());
    const submit = button('Invoke', undefined, 'primary', `Call ${spec.name}`);
    submit.type = 'submit';
    this.submitButton = submit;
    this.resultBox = el('div', { className: 'tool-result', attrs: { 'aria-live': 'polite' } });
    this.resultBox.hidden = true;

    const form = el('form', { className: 'tool-form', attrs: { novalidate: '' } }, [
      ...(this.fields.length
        ? this.fields.map((f) => f.root)
        : [el('p', { className: 'note', text: 'This tool takes no arguments.' })]),
      el('div', { className: 'form-actions' }, [submit]),
    ]);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });

    this.root.replaceChildren(
      el('header', { className: 'tool-head' }, [
        el('span', { className: 'tool-kicker', text: 'Invoke tool' }),
        el('h2', { className: 'tool-name' }, [
          ...(spec.server
            ? [
                el('span', { className: 'tool-server', text: spec.server }),
                el('span', { className: 'tool-sep', text: '›' }),
              ]
            : []),
          el('span', { text: spec.name }),
        ]),
        close,
      ]),
      ...(spec.description ? [el('p', { className: 'tool-description', text: spec.description })] : []),
      form,
      this.resultBox,
    );
    this.root.hidden = false;
    this.fields[0]?.input.focus();
    this.changed();
  }

  hide(): void {
    this.spec = undefined;
    this.requests.rejectAll(new Error('the tool form was closed'));
    this.fields = [];
    this.root.replaceChildren();
    this.root.hidden = true;
    this.changed();
  }

  /** The host's toolResult; one for a request this form is not waiting for is ignored. */
  showResult(requestId: string, ok: boolean, content: unknown): void {
    this.requests.resolve(requestId, { ok, content });
  }

  private render(
    resultBox: HTMLElement,
    submitButton: HTMLButtonElement,
    { ok, content }: { ok: boolean; content: unknown },
  ): void {
    submitButton.disabled = false;
    resultBox.dataset.ok = String(ok);
    resultBox.replaceChildren(
      el('div', { className: 'tool-result-title', text: ok ? 'Result' : 'Error' }),
      ...renderContent(content),
    );
  }

  private submit(): void {
    if (!this.spec || !this.resultBox || !this.submitButton || this.requests.size > 0) return;
    const args: Record<string, unknown> = {};
    let firstInvalid: Field | undefined;
    for (const field of this.fields) {
      const { value, error } = field.read();
      const message = error ?? (value === undefined && field.input.required ? 'required' : '');
      field.errorLine.textContent = message;
      field.input.setAttribute('aria-invalid', String(Boolean(message)));
      if (message) firstInvalid ??= field;
      else if (value !== undefined) args[field.name] = value;
    }
    if (firstInvalid) {
      firstInvalid.input.focus();
      return;
    }
    this.requestCount += 1;
    const requestId = `tool-${Date.now().toString(36)}-${this.requestCount}`;
    const { resultBox, submitButton } = this;
    // A form closed or replaced meanwhile drops its reply.
    void this.requests.wait(requestId).then(
      (reply) => this.render(resultBox, submitButton, reply),
      () => undefined,
    );
    submitButton.disabled = true;
    resultBox.hidden = false;
    delete resultBox.dataset.ok;
    resultBox.replaceChildren(el('p', { className: 'note running-note', text: 'Running…' }));
    this.post({
      type: 'invokeTool',
      requestId,
      ...(this.spec.server !== undefined ? { server: this.spec.server } : {}),
      name: this.spec.name,
      args,
    });
  }
}
