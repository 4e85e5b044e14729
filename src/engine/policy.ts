import type { PolicyViolation } from './types';

/**
 * Guardrails on submitted code. They catch mistakes and state intent ("this agent must not use sockets");
 * they are not a sandbox — isolation comes from the backends.
 */
export interface PolicyConfig {
  /** UTF-8 bytes; 0 disables. */
  maxCodeBytes: number;
  /** 0 disables. */
  maxCodeLines: number;
  /** Top-level module names code may import; empty allows all. */
  allowImports: string[];
  /** Top-level module names code may not import. */
  denyImports: string[];
  /** Substrings that may not appear in the code. */
  deniedTokens: string[];
}

export const defaultPolicy: PolicyConfig = {
  maxCodeBytes: 256 * 1024,
  maxCodeLines: 0,
  allowImports: [],
  denyImports: [],
  deniedTokens: [],
};

const IMPORT_PATTERNS = [
  /^\s*import\s+([^#\n]+)/gm,
  /^\s*from\s+([\w.]+)\s+import\b/gm,
  /__import__\(\s*['"]([\w.]+)['"]/g,
  /import_module\(\s*['"]([\w.]+)['"]/g,
];

/** Top-level module names the code imports, as far as a static reading can tell. */
export function importedModules(code: string): string[] {
  const found = new Set<string>();
  for (const pattern of IMPORT_PATTERNS) {
    for (const match of code.matchAll(pattern)) {
      // `import a.b as c, d` names several modules.
      for (const part of match[1].split(',')) {
        const name = part.trim().split(/\s+/)[0]?.split('.')[0];
        if (name && /^[A-Za-z_]\w*$/.test(name)) found.add(name);
      }
    }
  }
  return [...found];
}

export function checkPolicy(code: string, policy: PolicyConfig): PolicyViolation | undefined {
  if (policy.maxCodeBytes > 0) {
    const bytes = Buffer.byteLength(code);
    if (bytes > policy.maxCodeBytes) {
      return { rule: 'max_code_bytes', detail: `code is ${bytes} bytes; the limit is ${policy.maxCodeBytes}` };
    }
  }
  if (policy.maxCodeLines > 0) {
    const lines = code.split('\n').length;
    if (lines > policy.maxCodeLines) {
      return { rule: 'max_code_lines', detail: `code has ${lines} lines; the limit is ${policy.maxCodeLines}` };
    }
  }
  for (const token of policy.deniedTokens) {
    if (token && code.includes(token))
      return { rule: 'denied_token', detail: `code contains the denied token "${token}"` };
  }
  if (policy.denyImports.length > 0 || policy.allowImports.length > 0) {
    for (const module of importedModules(code)) {
      if (policy.denyImports.includes(module)) {
        return { rule: 'deny_imports', detail: `importing "${module}" is denied` };
      }
      if (policy.allowImports.length > 0 && !policy.allowImports.includes(module)) {
        return {
          rule: 'allow_imports',
          detail: `"${module}" is not in the allowed imports (${policy.allowImports.join(', ')})`,
        };
      }
    }
  }
  return undefined;
}
