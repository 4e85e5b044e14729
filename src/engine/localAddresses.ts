// Where a server of this process listens on this machine only: a free loopback port, or a Unix domain socket.
import * as net from 'node:net';
import * as path from 'node:path';

/** sun_path holds 108 bytes on Linux, 104 on macOS. */
const MAX_SOCKET_PATH = 100;

/** `name` in `dir` as a socket path, or undefined where the path is too long for a socket (a port must do). */
export function socketPathIn(dir: string, name: string): string | undefined {
  const socket = path.join(dir, name);
  return socket.length <= MAX_SOCKET_PATH ? socket : undefined;
}

/** A port free on 127.0.0.1 now (a server started right after can take it). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
