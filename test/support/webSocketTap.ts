// A loopback TCP relay in front of a server that counts the WebSocket frames crossing it, by opcode and direction:
// what a client sends on its WebSocket connections, seen on the wire, without changing a byte.
import * as net from 'node:net';

export interface WebSocketTap {
  /** http://127.0.0.1:PORT/ — the relay's address, to put in place of the server's. */
  readonly url: string;
  /** Frames by direction and opcode (1 text, 2 binary, 9 ping, 10 pong) on every WebSocket connection so far. */
  count(direction: 'toServer' | 'toClient', opcode: number): number;
  close(): Promise<void>;
}

/** Reads WebSocket frames from a byte stream once its HTTP upgrade is over; `onFrame` gets each frame's opcode. */
function frameReader(onFrame: (opcode: number) => void): (chunk: Buffer) => void {
  let buffered = Buffer.alloc(0);
  let upgraded = false;
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    if (!upgraded) {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      // A plain HTTP exchange (REST) on this connection: nothing to count.
      if (!/^upgrade:\s*websocket/im.test(head)) {
        buffered = Buffer.alloc(0);
        return;
      }
      upgraded = true;
      buffered = buffered.subarray(end + 4);
    }
    for (;;) {
      if (buffered.length < 2) return;
      const masked = (buffered[1]! & 0x80) !== 0;
      let length = buffered[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffered.length < 4) return;
        length = buffered.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffered.length < 10) return;
        length = Number(buffered.readBigUInt64BE(2));
        offset = 10;
      }
      const total = offset + (masked ? 4 : 0) + length;
      if (buffered.length < total) return;
      onFrame(buffered[0]! & 0x0f);
      buffered = buffered.subarray(total);
    }
  };
}

export async function startWebSocketTap(target: { host: string; port: number }): Promise<WebSocketTap> {
  const counts = new Map<string, number>();
  const counter = (direction: string) => (opcode: number) =>
    counts.set(`${direction}:${opcode}`, (counts.get(`${direction}:${opcode}`) ?? 0) + 1);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    const toServer = frameReader(counter('toServer'));
    const toClient = frameReader(counter('toClient'));
    client.on('data', (chunk: Buffer) => {
      toServer(chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      toClient(chunk);
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    count: (direction, opcode) => counts.get(`${direction}:${opcode}`) ?? 0,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
