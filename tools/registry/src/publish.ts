/**
 * Publish the packed packages as the next release publishes them: the tarball `pnpm pack` makes
 * (workspace: ranges already replaced), at the version the pending changesets give it, its
 * ranges on the other Pol packages moved to theirs (what `changeset version` then
 * `changeset publish` do).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Packed } from '@pol/packaging';
import { run, tail } from './commands.js';

/** Unpack a tarball under `dir` and stamp its package.json with the release versions; returns the package's folder. */
export function stageForRelease(packed: Packed, versions: ReadonlyMap<string, string>, dir: string): string {
  const into = join(dir, packed.name.replace('/', '+'));
  mkdirSync(into, { recursive: true });
  execFileSync('tar', ['-xzf', packed.tarball, '-C', into]);
  const folder = join(into, 'package');
  const file = join(folder, 'package.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  manifest.version = versions.get(packed.name) ?? packed.version;
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    const deps = manifest[field] as Record<string, string> | undefined;
    if (deps === undefined) continue;
    for (const [name, range] of Object.entries(deps)) {
      const next = versions.get(name);
      // pnpm wrote `^0.0.0` for `workspace:^`: the same operator, before the release's version.
      if (next !== undefined) deps[name] = range.replace(/\d+\.\d+\.\d+.*$/, next);
    }
  }
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  return folder;
}

/** `npm publish` a staged package folder to the registry at `url`, with the token in a config of its own. */
export async function publish(folder: string, url: string, token: string, work: string): Promise<void> {
  const npmrc = join(work, 'publish.npmrc');
  writeFileSync(npmrc, `registry=${url}\n${url.replace(/^https?:/, '')}:_authToken=${token}\n`);
  const outcome = await run(
    'npm',
    ['publish', folder, '--registry', url, '--userconfig', npmrc, '--access', 'public', '--ignore-scripts'],
    work,
    120_000,
  );
  if (outcome.status !== 0) throw new Error(`npm publish ${folder} failed (exit ${outcome.status}):\n${tail(outcome)}`);
}
