/**
 * What every published package.json says about the package beyond its code: its licence (and the
 * LICENSE file that says it), where its source, issues and documentation are, and dependencies
 * that let a user's own versions in.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { type Manifest, publishedPackages, root, rootManifest } from './workspace.js';

interface Repository {
  readonly type?: string;
  readonly url?: string;
  readonly directory?: string;
}

const rootRepository = rootManifest.repository as Repository | undefined;
/** `https://github.com/owner/name`, from the root's `git+https://github.com/owner/name.git`. */
const web = (rootRepository?.url ?? '').replace(/^git\+/, '').replace(/\.git$/, '');
const license = readFileSync(join(root, 'LICENSE'), 'utf8');
const packages = publishedPackages.map((p) => [p.dir, p.manifest] as const);

function dependencyRanges(manifest: Manifest, field: 'dependencies' | 'peerDependencies'): [string, string][] {
  return Object.entries((manifest[field] as Record<string, string> | undefined) ?? {});
}

describe('the root', () => {
  test('has an MIT LICENSE', () => {
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
    expect(rootManifest.license).toBe('MIT');
  });

  test('names its git repository, its issue tracker and its home page', () => {
    expect(rootRepository?.type).toBe('git');
    expect(rootRepository?.url).toMatch(/^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/);
    expect(rootManifest.bugs).toEqual({ url: `${web}/issues` });
    expect(rootManifest.homepage).toBe(`${web}#readme`);
  });
});

describe.each(packages)('%s', (dir, manifest) => {
  test('is MIT licensed, with the root LICENSE beside its package.json', () => {
    expect(manifest.license).toBe('MIT');
    expect(existsSync(join(root, dir, 'LICENSE'))).toBe(true);
    expect(readFileSync(join(root, dir, 'LICENSE'), 'utf8')).toBe(license);
  });

  test('names the repository (with its folder), the issue tracker, and its README as home page', () => {
    expect(manifest.repository).toEqual({ ...rootRepository, directory: dir });
    expect(manifest.bugs).toEqual(rootManifest.bugs);
    expect(manifest.homepage).toBe(`${web}/tree/main/${dir}#readme`);
  });

  test('depends on ranges, never on one exact version of a package outside the workspace', () => {
    for (const [name, range] of [
      ...dependencyRanges(manifest, 'dependencies'),
      ...dependencyRanges(manifest, 'peerDependencies'),
    ]) {
      if (name.startsWith('@pol/')) expect(range, name).toMatch(/^workspace:/);
      else expect(range, name).not.toMatch(/^=?\d+\.\d+\.\d+$/);
    }
  });

  test('takes type-only packages as peer dependencies, so that a program holds one copy of them', () => {
    const typeOnly = (name: string) => name.startsWith('@types/') || name === '@webgpu/types';
    expect(
      dependencyRanges(manifest, 'dependencies')
        .map(([name]) => name)
        .filter(typeOnly),
    ).toEqual([]);
  });
});
