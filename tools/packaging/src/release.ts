/**
 * The versions the next release gives the published packages: what `changeset version` would
 * make of the pending changesets (a package without one keeps its version).
 */
import getReleasePlan from '@changesets/get-release-plan';
import { publishedPackages, root } from './workspace.js';

/** Each published package's name → the version the next release publishes it at. */
export async function releaseVersions(): Promise<ReadonlyMap<string, string>> {
  const plan = await getReleasePlan(root);
  const versions = new Map(publishedPackages.map((p) => [p.manifest.name, p.manifest.version]));
  for (const release of plan.releases) if (versions.has(release.name)) versions.set(release.name, release.newVersion);
  return versions;
}

/**
 * Whether `version` satisfies a caret range (`^0.1.0`, `^1.2.3`): the only form of range the
 * templates use for Pol's packages. Any other form of range throws.
 */
export function satisfiesCaret(version: string, range: string): boolean {
  const parse = (v: string) => v.split('.').map(Number);
  const match = /^\^(\d+\.\d+\.\d+)$/.exec(range);
  if (match?.[1] === undefined) throw new Error(`'${range}' is not a caret range (^x.y.z)`);
  const [a = 0, b = 0, c = 0] = parse(version);
  const [x = 0, y = 0, z = 0] = parse(match[1]);
  const atLeast = a !== x ? a > x : b !== y ? b > y : c >= z;
  if (!atLeast) return false;
  // ^x.y.z allows changes that do not modify the left-most non-zero part.
  if (x > 0) return a === x;
  if (y > 0) return a === 0 && b === y;
  return a === 0 && b === 0 && c === z;
}
