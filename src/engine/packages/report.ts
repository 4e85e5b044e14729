// How install and check outcomes are told, the same way for every backend.
import { meetsSpecifier, type RequirementSpec } from './spec';
import type { PackageStatus } from '../types';

/** A check's verdict for one request, given the version installed (if any). */
export function checkedStatus(spec: RequirementSpec, version: string | undefined): PackageStatus {
  const base = { name: spec.name, requested: spec.requested };
  if (!version) return { ...base, installed: false, error: 'not installed' };
  if (!meetsSpecifier(version, spec.specifier))
    return { ...base, installed: false, version, error: `version ${version} does not meet ${spec.requirement}` };
  return { ...base, installed: true, version };
}

/** One line: what is there, and the first problem. */
export function summarize(packages: PackageStatus[], action: 'install' | 'check'): string {
  const done = packages.filter((p) => p.installed);
  const failed = packages.filter((p) => !p.installed);
  const list = done.map((p) => (p.version ? `${p.name}==${p.version}` : p.name)).join(', ');
  if (failed.length === 0) return `${action === 'install' ? 'installed' : 'all installed'}: ${list}`;
  const first = failed[0];
  const head =
    action === 'install' ? `${done.length} of ${packages.length} installed` : checkHead(failed, packages.length);
  return `${head}${list ? ` (${list})` : ''}; ${first.name}: ${first.error ?? 'not installed'}`;
}

/** A package present in a version that misses the request is installed, and is not counted as missing. */
function checkHead(failed: PackageStatus[], total: number): string {
  const missing = failed.filter((p) => !p.version).length;
  const unmet = failed.length - missing;
  return [
    missing > 0 && `${missing} of ${total} not installed`,
    unmet > 0 && `${unmet} of ${total} installed in a version that does not meet the request`,
  ]
    .filter(Boolean)
    .join(', ');
}
