import * as zlib from 'node:zlib';

/**
 * Python that defines `make_png(width, height)`: a PNG (8-bit RGB, a colour gradient) written with zlib and
 * struct only, so display tests need neither matplotlib nor Pillow and run on both backends.
 */
export const PYTHON_PNG_ENCODER = `
import struct as _struct, zlib as _zlib

def make_png(width, height):
    def chunk(kind, body):
        return _struct.pack(">I", len(body)) + kind + body + _struct.pack(">I", _zlib.crc32(kind + body) & 0xFFFFFFFF)
    rows = b"".join(
        b"\\x00" + b"".join(bytes((x * 255 // max(1, width - 1), y * 255 // max(1, height - 1), 160)) for x in range(width))
        for y in range(height)
    )
    header = _struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", header) + chunk(b"IDAT", _zlib.compress(rows)) + chunk(b"IEND", b"")
`;

export const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** CRC-32 as PNG chunks use it (zlib.crc32 only exists from Node 20.15). */
function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * Checks what a PNG viewer would: the signature, every chunk's CRC, and image data that inflates to exactly
 * the rows IHDR announces (8-bit RGB or RGBA). Returns the size.
 */
export function checkPng(png: Buffer): { width: number; height: number } {
  if (!png.subarray(0, 8).equals(PNG_MAGIC)) throw new Error('not a PNG: wrong signature');
  const idat: Buffer[] = [];
  let header: Buffer | undefined;
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const kind = png.subarray(at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (png.readUInt32BE(at + 8 + length) !== crc32(Buffer.concat([kind, body])))
      throw new Error(`bad CRC in ${kind.toString('latin1')}`);
    if (kind.toString('latin1') === 'IHDR') header = body;
    if (kind.toString('latin1') === 'IDAT') idat.push(body);
    at += 12 + length;
  }
  if (!header) throw new Error('no IHDR chunk');
  const { width, height } = { width: header.readUInt32BE(0), height: header.readUInt32BE(4) };
  const channels = { 2: 3, 6: 4 }[header[9]];
  if (header[8] !== 8 || !channels)
    throw new Error(`unexpected PNG format: depth ${header[8]}, colour type ${header[9]}`);
  const rows = zlib.inflateSync(Buffer.concat(idat));
  if (rows.length !== height * (1 + width * channels))
    throw new Error(`image data is ${rows.length} bytes, not ${height} rows of ${width} pixels`);
  return { width, height };
}
