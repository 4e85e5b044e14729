// @renovatebot/pep440 splits a specifier clause into its parts only in `lib/specifier`, a module its index does
// not export and whose declared types leave out the `legacy` part. This file is the one place that reaches into
// it, so a release that moves or reshapes it breaks here, and test/unit/pep440-specifier.test.ts says so.
import { parse } from '@renovatebot/pep440/lib/specifier';

/** The named groups the library's clause pattern fills: `version` (with `prefix` ".*"), or `legacy` after `===`. */
interface ClauseParts {
  operator: string;
  version?: string;
  prefix?: string;
  legacy?: string;
}

/**
 * One specifier clause (`>= 1.2`, `==2.0.*`, `===1.0-weird`) rebuilt without spaces, or null when the library
 * does not accept it as exactly one PEP 440 clause.
 */
export function canonicalSpecifierClause(clause: string): string | null {
  const parsed = parse(clause) as ClauseParts[] | null;
  if (parsed?.length !== 1) return null;
  const { operator, version, prefix, legacy } = parsed[0];
  return `${operator}${version ?? legacy}${prefix ?? ''}`;
}
