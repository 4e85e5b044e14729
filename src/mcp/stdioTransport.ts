import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../engine/index';
import { classifyIncoming, MAX_MESSAGE_BYTES, tooLongReply, type JsonRpcErrorReply } from './jsonRpcInput';
import { LineSplitter, type SplitLine } from './lineSplitter';

export interface StdioLineTransportOptions {
  log: Logger;
  input?: Readable;
  output?: Writable;
  maxMessageBytes?: number;
  /** Called once the transport closes (end of stdin, stdout failing), after whoever owns it heard `onclose`. */
  onClosed?: () => void;
}

/**
 * MCP over newline-delimited JSON on stdin/stdout. Unlike the SDK's StdioServerTransport, which stops reading
 * after one line over its buffer limit and never answers a message its schema rejects, this answers every
 * broken request with a JSON-RPC error, skips over-long lines without holding them, and keeps serving.
 * End of input closes the transport, so the server can shut down.
 */
export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly input: Readable;
  private readonly output: Writable;
  private readonly log: Logger;
  private readonly maxMessageBytes: number;
  private readonly onClosed?: () => void;
  private readonly splitter: LineSplitter;
  private closed = false;

  constructor(options: StdioLineTransportOptions) {
    this.input = options.input ?? process.stdin;
    this.output = options.output ?? process.stdout;
    this.log = options.log;
    this.maxMessageBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    this.onClosed = options.onClosed;
    this.splitter = new LineSplitter(this.maxMessageBytes);
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', this.onStreamError);
    // A client that went away makes stdout fail (EPIPE); unheard, that error would crash the process.
    this.output.on('error', this.onStreamError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onStreamError);
    this.output.off('error', this.onStreamError);
    this.input.pause();
    this.onclose?.();
    this.onClosed?.();
  }

  private readonly onData = (chunk: Buffer | string) => {
    for (const line of this.splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) this.handle(line);
  };

  private readonly onEnd = () => {
    for (const line of this.splitter.end()) this.handle(line);
    void this.close();
  };

  private readonly onStreamError = (error: Error) => {
    this.onerror?.(error);
    void this.close();
  };

  private handle(line: SplitLine): void {
    if (line.kind === 'tooLong') {
      this.answer(tooLongReply(line.bytes, this.maxMessageBytes, line.head, line.tail));
      return;
    }
    const incoming = classifyIncoming(line.text);
    if (incoming.kind === 'message') this.onmessage?.(incoming.message);
    else if (incoming.kind === 'answer') this.answer(incoming.reply);
    else this.log.warn(`ignored ${incoming.problem}`);
  }

  private answer(reply: JsonRpcErrorReply): void {
    this.log.warn(
      `answered a message with error ${reply.error.code} (id ${JSON.stringify(reply.id)}): ${reply.error.message}`,
    );
    void this.write(reply);
  }

  private write(message: JSONRPCMessage | JsonRpcErrorReply): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }
}
