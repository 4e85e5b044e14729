// Which Host headers the HTTP server answers (anything else is DNS rebinding, or a mistake), and which listen
// addresses stay on this machine.
import { isIP } from 'node:net';
import * as os from 'node:os';

const WILDCARDS = new Set(['0.0.0.0', '::']);

/** Only this machine can reach the address: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** The host as it appears in a URL or a Host header: IPv6 addresses in brackets. */
export function hostInUrl(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * The Host headers a client of `host:port` sends: the address itself, `localhost` for loopback, and for a
 * wildcard address every address of this machine's interfaces (that is where it listens).
 */
export function hostHeaders(host: string, port: number): string[] {
  const names = new Set([host]);
  if (isLoopbackHost(host) || WILDCARDS.has(host)) names.add('localhost');
  if (WILDCARDS.has(host)) {
    for (const address of Object.values(os.networkInterfaces()).flat()) if (address) names.add(address.address);
  }
  return [...names].map((name) => `${hostInUrl(name)}:${port}`);
}
