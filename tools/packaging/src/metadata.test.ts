/**
 * What every published package.json says about the package beyond its code: its licence (and the
 * LICENSE file that says it), no address the project does not have, and dependencies that let a
 * user's own versions in.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { type Manifest, publishedPackages, root, rootManifest, workspacePackages } from './workspace.js';

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
});

// The project has no public home yet: a `repository`, `bugs` or `homepage` field could only name
// an invented address, which npm would show on every package's page. They come back with a real one.
test.each([['(the root)', rootManifest] as const, ...workspacePackages.map((p) => [p.dir, p.manifest] as const)])(
  '%s names no repository, issue tracker or home page',
  (_, manifest) => {
    for (const field of ['repository', 'bugs', 'homepage']) expect(manifest[field], field).toBeUndefined();
  },
);

describe.each(packages)('%s', (dir, manifest) => {
  test('is MIT licensed, with the root LICENSE beside its package.json', () => {
    expect(manifest.license).toBe('MIT');
    expect(existsSync(join(root, dir, 'LICENSE'))).toBe(true);
    expect(readFileSync(join(root, dir, 'LICENSE'), 'utf8')).toBe(license);
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
