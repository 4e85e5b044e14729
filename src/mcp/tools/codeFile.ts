// code_file: a long program built over several calls (create, append, read), which run_python can run by name.
import { z } from 'zod';
import type { Stores } from '../../engine/index';
import { guarded, refused, structuredResult } from '../shared';
import type { RegisteredTool, ToolRegistry } from '../toolRegistry';

const codeFileInput = z.object({
  action: z.enum(['create', 'append', 'read']),
  filename: z.string(),
  content: z.string().optional(),
});

/** `code_file`, over the code files store. */
export function registerCodeFileTool(registry: ToolRegistry, stores: Stores): RegisteredTool {
  return registry.register('code_file', {
    description:
      'A long program written over several calls: create (replaces), append, read (.py .txt .json .csv .md, 1 MB). ' +
      'Run it with run_python(file=...).',
    input: codeFileInput,
    // create replaces a file; append is not idempotent.
    annotations: {
      title: 'Code file',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    call: (args) =>
      guarded(async () => {
        if (args.action === 'read') {
          const file = await stores.codeFiles.read(args.filename);
          return structuredResult(file.content, {
            filename: file.name,
            size: file.size,
            mtime: file.mtime,
            content: file.content,
          });
        }
        if (args.content === undefined) return refused(`${args.action} needs content`);
        const file = await stores.codeFiles.write(args.filename, args.content, args.action);
        const line = `${args.action === 'create' ? 'wrote' : 'appended'} ${file.bytes_written} bytes to ${file.name} (now ${file.size} bytes)`;
        return structuredResult(line, {
          filename: file.name,
          size: file.size,
          mtime: file.mtime,
          bytes_written: file.bytes_written,
        });
      }),
  });
}
