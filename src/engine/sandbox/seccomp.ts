// A seccomp filter for the sandboxed process: threads may be created, processes may not. Node's permission
// model refuses child processes too, but a Worker given any `execArgv` runs without the model (so it does on Node 20,
// the oldest Node supported), so the kernel has the last word: clone without CLONE_THREAD, fork and vfork fail with
// EPERM, clone3 with ENOSYS (glibc then falls back to clone, which is checked). The calls below are refused too:
// nothing Pyodide or Node needs, and each is a way into another process's memory (ptrace,
// process_vm_*), a large kernel attack surface (io_uring, bpf, perf_event_open, userfaultfd, keyctl) or a
// change to the sandbox itself (namespaces, mounts, personality). System calls of another ABI (i386 through
// int 0x80, x32) are refused outright, since their numbers differ. With the network off, a Unix socket cannot be
// made either: the network namespace keeps the sandbox off every port, but a socket file in a mounted folder (a
// database's or an app server's in the workspace) would still answer connect(). socketpair() is a different call
// and stays, for what the process does inside itself.

import type { NetworkAccess } from './bubblewrap';

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
const AF_UNIX = 1;
/** Offsets into struct seccomp_data: the system call number, its ABI, the low word of the first argument (little-endian). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;
const X32_BIT = 0x40000000;

/** System calls refused with EPERM, by name (the names the suite checks); numbers per ABI below. */
export const REFUSED_SYSCALLS = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'unshare',
  'setns',
  'personality',
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'mount',
  'umount2',
  'pivot_root',
  'chroot',
  'open_tree',
  'move_mount',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
  'name_to_handle_at',
  'open_by_handle_at',
  'kexec_load',
  'init_module',
  'finit_module',
  'delete_module',
] as const;
export type RefusedSyscall = (typeof REFUSED_SYSCALLS)[number];

interface Abi {
  audit: number;
  clone: number;
  socket: number;
  clone3: number;
  /** fork and vfork, where the ABI has them. */
  forks: number[];
  refused: Record<RefusedSyscall, number>;
  x32: boolean;
}

/** The numbers shared by both ABIs (the calls added since Linux 5.0 are numbered alike everywhere). */
const COMMON = {
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
};

export const ABIS: Partial<Record<NodeJS.Architecture, Abi>> = {
  x64: {
    audit: 0xc000003e,
    clone: 56,
    socket: 41,
    clone3: 435,
    forks: [57, 58],
    x32: true,
    refused: {
      ...COMMON,
      ptrace: 101,
      process_vm_readv: 310,
      process_vm_writev: 311,
      unshare: 272,
      setns: 308,
      personality: 135,
      keyctl: 250,
      add_key: 248,
      request_key: 249,
      bpf: 321,
      perf_event_open: 298,
      userfaultfd: 323,
      mount: 165,
      umount2: 166,
      pivot_root: 155,
      chroot: 161,
      name_to_handle_at: 303,
      open_by_handle_at: 304,
      kexec_load: 246,
      init_module: 175,
      finit_module: 313,
      delete_module: 176,
    },
  },
  arm64: {
    audit: 0xc00000b7,
    clone: 220,
    socket: 198,
    clone3: 435,
    forks: [],
    x32: false,
    refused: {
      ...COMMON,
      ptrace: 117,
      process_vm_readv: 270,
      process_vm_writev: 271,
      unshare: 97,
      setns: 268,
      personality: 92,
      keyctl: 219,
      add_key: 217,
      request_key: 218,
      bpf: 280,
      perf_event_open: 241,
      userfaultfd: 282,
      mount: 40,
      umount2: 39,
      pivot_root: 41,
      chroot: 51,
      name_to_handle_at: 264,
      open_by_handle_at: 265,
      kexec_load: 104,
      init_module: 105,
      finit_module: 273,
      delete_module: 106,
    },
  },
};

type Instruction = [code: number, jt: number, jf: number, k: number];

/**
 * The compiled filter for this machine's architecture, as bwrap's --seccomp reads it; undefined where no filter is
 * known. With the network off it refuses Unix sockets too.
 */
export function seccompFilter(network: NetworkAccess, arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const abi = ABIS[arch];
  if (!abi) return undefined;
  const allow: Instruction = [RET_K, 0, 0, RET_ALLOW];
  const refuse: Instruction = [RET_K, 0, 0, RET_ERRNO | EPERM];
  // A jump's two offsets count the instructions skipped when its test holds and when it does not.
  const program: Instruction[] = [[LD_W_ABS, 0, 0, ARCH], [JEQ_K, 1, 0, abi.audit], refuse, [LD_W_ABS, 0, 0, NR]];
  if (abi.x32) program.push([JGE_K, 0, 1, X32_BIT], refuse);
  program.push([JEQ_K, 0, 1, abi.clone3], [RET_K, 0, 0, RET_ERRNO | ENOSYS]);
  for (const nr of [...abi.forks, ...Object.values(abi.refused)]) program.push([JEQ_K, 0, 1, nr], refuse);
  if (network === 'off')
    program.push([JEQ_K, 0, 4, abi.socket], [LD_W_ABS, 0, 0, ARG0_LOW], [JEQ_K, 0, 1, AF_UNIX], refuse, allow);
  program.push(
    [JEQ_K, 1, 0, abi.clone],
    allow,
    [LD_W_ABS, 0, 0, ARG0_LOW],
    [JSET_K, 0, 1, CLONE_THREAD],
    allow,
    refuse,
  );
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], index) => {
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}
