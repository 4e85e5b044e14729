// Flat config, as vscode-eslint does: recommended JS + typescript-eslint rules for every TS file.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NO_VSCODE = { name: 'vscode', message: 'engine/ and mcp/ never import vscode' };
/** Any module of the engine but its index (src/engine/index.ts), which exports what the front ends may use. */
const ENGINE_DOOR_ONLY = {
  group: ['**/engine/*', '**/engine/**/*', '!**/engine/index'],
  message: 'import the engine from engine/index, which exports its public API',
};
/**
 * Any module of the engine but its browser door (src/engine/browser.ts), for the bundles that run in a browser: the
 * engine's index pulls in Node's modules. The MCP App's ES modules name it with its .js extension.
 */
const ENGINE_BROWSER_DOOR_ONLY = {
  group: ['**/engine/*', '**/engine/**/*', '!**/engine/browser', '!**/engine/browser.js'],
  message: 'import the engine from engine/browser, which exports what runs in a browser',
};
/** Any module of the MCP server but its index (src/mcp/index.ts), which exports what the extension uses. */
const MCP_DOOR_ONLY = {
  group: ['**/mcp/*', '**/mcp/**/*', '!**/mcp/index'],
  message: 'import the MCP server from mcp/index, which exports what the extension uses',
};

/**
 * Dependencies' private parts, each reached from one adapter only (named in the message), so a release that moves
 * them breaks one file and that file's test.
 */
const DEPENDENCY_PRIVATES = [
  {
    selector: 'ImportDeclaration[source.value=/^@renovatebot\\/pep440\\/lib\\//]',
    message: "@renovatebot/pep440's private modules are reached only from src/engine/packages/pep440Specifier.ts",
  },
  {
    selector: 'Property[key.name=/^_(load|make)Snapshot$/], MemberExpression[property.name="makeMemorySnapshot"]',
    message: "Pyodide's private snapshot API is reached only from src/engine/backends/pyodide/pyodideSnapshots.ts",
  },
  {
    selector: 'MemberExpression[property.name="binding"]',
    message: "Node's private process.binding is answered only in src/engine/backends/pyodide/constantsBinding.ts",
  },
];
const DEPENDENCY_ADAPTERS = [
  'src/engine/packages/pep440Specifier.ts',
  'src/engine/backends/pyodide/pyodideSnapshots.ts',
  'src/engine/backends/pyodide/constantsBinding.ts',
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'out/**',
      'node_modules/**',
      '.vscode-test-host/**',
      '.vscode-test/**',
      'coverage/**',
      'test-output/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-restricted-imports': 'off',
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    // The pure core must run in the stdio CLI and plain node tests.
    files: ['src/engine/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [NO_VSCODE] }] },
  },
  {
    // The MCP server runs without VS Code too; it and the extension see the engine through its one door.
    files: ['src/mcp/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [NO_VSCODE], patterns: [ENGINE_DOOR_ONLY] }] },
  },
  {
    files: ['src/vscode/**/*.ts', 'src/extension.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [ENGINE_DOOR_ONLY, MCP_DOOR_ONLY] }] },
  },
  {
    // The results webview and the MCP App run in a browser: they see the engine through its browser door.
    files: ['src/webview/**/*.ts', 'src/app/**/*.mts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [ENGINE_BROWSER_DOOR_ONLY] }] },
  },
  {
    files: ['src/**/*.ts', 'src/**/*.mts'],
    ignores: DEPENDENCY_ADAPTERS,
    rules: { 'no-restricted-syntax': ['error', ...DEPENDENCY_PRIVATES] },
  },
  {
    // Plain CommonJS: extensions used as test fixtures, and the bench's worker thread (tsx's loader does not reach it).
    files: ['test/vscode/fixtures/**/*.js', 'bench/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { exports: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        setTimeout: 'readonly',
        URL: 'readonly',
        TextDecoder: 'readonly',
      },
    },
  },
);
