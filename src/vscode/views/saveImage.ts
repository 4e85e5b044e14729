// A figure's Save in the results page: where to, asked in VS Code's save dialog; the bytes as the run displayed them.
import * as vscode from 'vscode';
import { SAVABLE_IMAGES, type SavableImageMime } from '../../webview/protocol';

/** Writes the image the person chose to save; returns where, or undefined when they cancelled. */
export async function saveImage(image: {
  mime: SavableImageMime;
  data: string;
  title?: string;
}): Promise<vscode.Uri | undefined> {
  const extension = SAVABLE_IMAGES[image.mime];
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const name = `${fileStem(image.title)}.${extension}`;
  const target = await vscode.window.showSaveDialog({
    title: 'Code Mode: save the figure',
    saveLabel: 'Save Figure',
    ...(folder ? { defaultUri: vscode.Uri.joinPath(folder, name) } : {}),
    filters: { [extension.toUpperCase()]: [extension] },
  });
  if (!target) return undefined;
  await vscode.workspace.fs.writeFile(target, imageBytes(image.mime, image.data));
  return target;
}

/** displays.ts accepts SVG as markup or as base64; every other image is base64. */
export function imageBytes(mime: SavableImageMime, data: string): Uint8Array {
  const raw = data.trimStart();
  if (mime === 'image/svg+xml' && raw.startsWith('<')) return Buffer.from(data, 'utf8');
  return Buffer.from(data.replace(/\s+/g, ''), 'base64');
}

/** A file name from the display's title ("Figure 1", "out/chart.png"): its last part, plain characters only. */
function fileStem(title: string | undefined): string {
  const last = (title ?? '').split(/[\\/]/).pop() ?? '';
  const stem = last
    .replace(/\.(png|jpe?g|gif|webp|svg)$/i, '')
    .replace(/[^\w.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 64);
  return stem || 'figure';
}
