// Python files imported by TypeScript are embedded as text by esbuild (loader '.py': 'text').
declare module '*.py' {
  const source: string;
  export default source;
}
