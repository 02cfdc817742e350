/** The repository's package.json files, read once: the root's and every workspace package's. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../../..', import.meta.url));

export interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly license?: string;
  readonly engines?: { readonly node?: string };
  readonly [field: string]: unknown;
}

export interface WorkspacePackage {
  /** The folder, relative to the repository's root (`packages/core`). */
  readonly dir: string;
  readonly manifest: Manifest;
}

function read(dir: string): Manifest {
  return JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as Manifest;
}

/** The root package.json. */
export const rootManifest = read('.');

/** Every workspace package (the folders pnpm-workspace.yaml names), in folder order. */
export const workspacePackages: readonly WorkspacePackage[] = ['packages', 'examples', 'tools']
  .flatMap((group) =>
    readdirSync(join(root, group))
      .map((name) => join(root, group, name))
      .filter((dir) => existsSync(join(dir, 'package.json'))),
  )
  .concat([join(root, 'benchmarks')])
  .map((dir) => relative(root, dir))
  .map((dir) => ({ dir, manifest: read(dir) }));

/** The packages that are published: those not marked private. */
export const publishedPackages = workspacePackages.filter((p) => p.manifest.private !== true);
