/**
 * A request to a store that cannot be honoured because of what the caller asked (a bad name, a missing file,
 * too much content). Its message is written for the caller — often a model — and front doors show it as is;
 * any other error is an environment failure (disk, permissions) and is reported as such.
 */
export class StoreError extends Error {
  override readonly name = 'StoreError';
}
