/**
 * The published packages packed as a release packs them: `pnpm pack`, which applies each
 * package's `files` and replaces every `workspace:` range with the version it stands for (what
 * `changeset publish` does through `pnpm publish`).
 */
import { type ExecFileSyncOptionsWithStringEncoding, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type Manifest, publishedPackages, root, rootManifest } from './workspace.js';

/**
 * Run the pinned pnpm: the one running this test when pnpm started it (`pnpm run test` sets
 * npm_execpath), else the pinned version through npx (which caches it, but may ask the registry).
 */
export function pnpm(args: readonly string[], cwd: string): string {
  const running = process.env.npm_execpath;
  const options: ExecFileSyncOptionsWithStringEncoding = {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 16 << 20,
  };
  if (running !== undefined && /^pnpm(\.c?js)?$/.test(basename(running))) {
    // pnpm 12 ships as a native binary; earlier lines as a script for node.
    return running.endsWith('js')
      ? execFileSync(process.execPath, [running, ...args], options)
      : execFileSync(running, args, options);
  }
  const version = String(rootManifest.packageManager).split('@')[1] ?? '';
  return execFileSync('npx', ['--yes', `pnpm@${version}`, ...args], options);
}

export interface Packed {
  readonly name: string;
  readonly version: string;
  /** The package's folder, relative to the repository's root. */
  readonly dir: string;
  /** The tarball's absolute path. */
  readonly tarball: string;
}

/** Pack every published package into `dest`. The packages must be built (their `dist/` is what ships). */
export function packAll(dest: string): Packed[] {
  mkdirSync(dest, { recursive: true });
  return publishedPackages.map(({ dir, manifest }) => {
    const output = pnpm(['pack', '--pack-destination', dest], join(root, dir));
    const tarball = output.trim().split('\n').at(-1) ?? '';
    if (!tarball.endsWith('.tgz')) throw new Error(`pnpm pack in ${dir} printed no tarball path:\n${output}`);
    return { name: manifest.name, version: manifest.version, dir, tarball };
  });
}

/** The paths of the files in a tarball, relative to its `package/` folder, sorted. */
export function filesIn(tarball: string): string[] {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.startsWith('package/') && !line.endsWith('/'))
    .map((line) => line.slice('package/'.length))
    .sort();
}

/** One file of a tarball, as text. */
export function fileIn(tarball: string, path: string): string {
  return execFileSync('tar', ['-xzOf', tarball, `package/${path}`], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** The package.json a tarball ships. */
export function manifestIn(tarball: string): Manifest {
  return JSON.parse(fileIn(tarball, 'package.json')) as Manifest;
}
