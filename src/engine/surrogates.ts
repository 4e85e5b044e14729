// UTF-16 surrogate pairs, which a cut through a string must never split (a lone half becomes U+FFFD).

export function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
