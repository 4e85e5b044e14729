// A seccomp filter for the sandboxed process: threads may be created, processes may not. Node's permission
// model refuses child processes too, but a Worker given `execArgv: ['--allow-child-process']` gets them back
// (measured on Node 20), so the kernel has the last word: clone without CLONE_THREAD, fork and vfork fail
// with EPERM, clone3 with ENOSYS (glibc then falls back to clone, which is checked). System calls of another
// ABI (i386 through int 0x80, x32) are refused outright, since their numbers differ.

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const JSET_K = 0x45;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
const CLONE_THREAD = 0x00010000;
/** Offsets into struct seccomp_data: the system call number, its ABI, the low word of the first argument (little-endian). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;
const X32_BIT = 0x40000000;

interface Abi {
  audit: number;
  clone: number;
  clone3: number;
  /** fork and vfork, where the ABI has them. */
  forks: number[];
  x32: boolean;
}

const ABIS: Partial<Record<NodeJS.Architecture, Abi>> = {
  x64: { audit: 0xc000003e, clone: 56, clone3: 435, forks: [57, 58], x32: true },
  arm64: { audit: 0xc00000b7, clone: 220, clone3: 435, forks: [], x32: false },
};

type Instruction = [code: number, jt: number, jf: number, k: number];

/** The compiled filter for this machine's architecture, as bwrap's --seccomp reads it; undefined where no filter is known. */
export function noProcessesFilter(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const abi = ABIS[arch];
  if (!abi) return undefined;
  const allow: Instruction = [RET_K, 0, 0, RET_ALLOW];
  const refuse: Instruction = [RET_K, 0, 0, RET_ERRNO | EPERM];
  // A jump's two offsets count the instructions skipped when its test holds and when it does not.
  const program: Instruction[] = [[LD_W_ABS, 0, 0, ARCH], [JEQ_K, 1, 0, abi.audit], refuse, [LD_W_ABS, 0, 0, NR]];
  if (abi.x32) program.push([JGE_K, 0, 1, X32_BIT], refuse);
  program.push([JEQ_K, 0, 1, abi.clone3], [RET_K, 0, 0, RET_ERRNO | ENOSYS]);
  for (const nr of abi.forks) program.push([JEQ_K, 0, 1, nr], refuse);
  program.push([JEQ_K, 1, 0, abi.clone], allow, [LD_W_ABS, 0, 0, ARG0_LOW], [JSET_K, 0, 1, CLONE_THREAD], allow, refuse);
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}
