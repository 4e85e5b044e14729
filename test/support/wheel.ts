// Builds small pure-Python wheels for tests, with Node alone: no pip, no network. A wheel is a zip with the
// package's files and a .dist-info folder (METADATA, WHEEL, RECORD with each file's sha256).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { crc32 } from './crc32';

/** 1980-01-01, the earliest date a zip entry can carry. */
const DOS_DATE = (1 << 5) | 1;

/** A zip archive (deflated entries) of `files`, in order. */
export function zip(files: [string, Buffer][]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of files) {
    const nameBytes = Buffer.from(name, 'utf8');
    const packed = deflateRawSync(data);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(packed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(8, 10);
    central.writeUInt16LE(DOS_DATE, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(packed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38); // regular file, rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export interface WheelOptions {
  /** Distribution and import name (one module package of the same name). */
  name: string;
  version: string;
  /** Source of the package's __init__.py. */
  init: string;
}

/** Writes `<name>-<version>-py3-none-any.whl` into `dir`; returns its absolute path. */
export function buildWheel(dir: string, options: WheelOptions): string {
  const distInfo = `${options.name}-${options.version}.dist-info`;
  const files: [string, Buffer][] = [
    [`${options.name}/__init__.py`, Buffer.from(options.init)],
    [
      `${distInfo}/METADATA`,
      Buffer.from(
        `Metadata-Version: 2.1\nName: ${options.name}\nVersion: ${options.version}\nSummary: A test package\n`,
      ),
    ],
    [
      `${distInfo}/WHEEL`,
      Buffer.from('Wheel-Version: 1.0\nGenerator: code-mode-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n'),
    ],
  ];
  const record = files.map(
    ([name, data]) => `${name},sha256=${createHash('sha256').update(data).digest('base64url')},${data.length}`,
  );
  record.push(`${distInfo}/RECORD,,`);
  files.push([`${distInfo}/RECORD`, Buffer.from(record.join('\n') + '\n')]);
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${options.name}-${options.version}-py3-none-any.whl`);
  fs.writeFileSync(file, zip(files));
  return file;
}
