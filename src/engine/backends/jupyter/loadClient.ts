import * as path from 'node:path';
import { assetsDir } from '../../paths';
import type { KernelClient } from './kernelTypes';

let client: KernelClient | undefined;

/** The Jupyter client bundle, loaded on first use (it is a fifth of the extension's size). */
export function kernelClient(): KernelClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a bundle of its own, found at run time
  client ??= require(path.join(assetsDir(), 'jupyter-client.js')) as KernelClient;
  return client;
}
