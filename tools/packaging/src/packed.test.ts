/**
 * What each published package's tarball holds, packed as a release packs it: the build, the
 * sources without their tests, README, LICENSE; every import of the shipped code is the package
 * itself, a relative file, a Node.js builtin, or a dependency it declares; no `workspace:` range;
 * and a package.json with nothing in it that only serves the repository (the root's
 * `.pnpmfile.mjs` drops `devDependencies` and `scripts` as pnpm packs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { fileIn, filesIn, manifestIn, type Packed, packAll } from './pack.js';
import { publishedPackages } from './workspace.js';

let dest: string;
let packed: Packed[];

beforeAll(() => {
  dest = mkdtempSync(join(tmpdir(), 'pol-packed-'));
  packed = packAll(dest);
}, 120_000);

afterAll(() => {
  if (dest !== undefined) rmSync(dest, { recursive: true, force: true });
});

function tarballOf(name: string): Packed {
  const found = packed.find((p) => p.name === name);
  if (found === undefined) throw new Error(`${name} was not packed`);
  return found;
}

/**
 * The fields a published package.json may hold: what npm, Node.js, TypeScript and bundlers read,
 * and what a registry shows. Anything else (`devDependencies`, `scripts`, `private`,
 * `packageManager`, …) serves the repository only; a new field here is a decision.
 */
const publishedFields = new Set([
  'name',
  'version',
  'description',
  'license',
  'keywords',
  'type',
  'sideEffects',
  'exports',
  'main',
  'types',
  'files',
  'engines',
  'dependencies',
  'peerDependencies',
  'peerDependenciesMeta',
]);

/** Whether a path is a test, a type test, or test support: what must never ship. */
function isTestFile(path: string): boolean {
  return (
    /(^|\/)(test-support|__tests__|__mocks__|fixtures?)\//.test(path) ||
    /\.(test|spec)(-d)?\.[cm]?[jt]sx?$/.test(path) ||
    /\.test-d\.ts$/.test(path)
  );
}

/** The module specifiers a source or declaration file imports (static, dynamic, and `/// <reference types>`). */
function importsOf(text: string): string[] {
  const references = [...text.matchAll(/\/\/\/\s*<reference\s+types="([^"]+)"/g)];
  // Doc comments hold examples that import other packages: they are prose, not imports.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specifiers = [
    ...references,
    ...code.matchAll(/(?:^|[\s;}])(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]/gm),
    ...code.matchAll(/(?:^|[\s;}])import\s*['"]([^'"]+)['"]/gm),
    ...code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1] ?? '');
  return [...new Set(specifiers)];
}

/** The package a bare specifier names (`@pol/core/backend` → `@pol/core`). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

describe('the tarball checks themselves', () => {
  test('tell test files from shipped ones', () => {
    for (const path of [
      'src/a.test.ts',
      'src/a.test-d.ts',
      'src/test-support/arbitraries.ts',
      'dist/x.spec.js',
      'src/fixtures/a.json',
    ]) {
      expect(isTestFile(path), path).toBe(true);
    }
    for (const path of ['src/index.ts', 'dist/testing.js', 'dist/contest.d.ts', 'README.md'])
      expect(isTestFile(path), path).toBe(false);
  });

  test('find every kind of import, and none in comments', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from 'fast-check';",
      "export { c } from '@pol/core/backend';",
      "import 'side-effect';",
      "const m = await import('node:fs');",
      '/// <reference types="@webgpu/types" preserve="true" />',
      '/**',
      ' * ```ts',
      " * import { Arena } from '@pol/arena';",
      ' * ```',
      ' */',
      "// import { x } from 'commented-out';",
    ].join('\n');
    expect(importsOf(text).sort()).toEqual([
      './a.js',
      '@pol/core/backend',
      '@webgpu/types',
      'fast-check',
      'node:fs',
      'side-effect',
    ]);
  });
});

describe.each(publishedPackages.map((p) => [p.manifest.name]))('%s, packed', (name) => {
  test('holds its build, README, LICENSE and package.json, and every file its exports name', () => {
    const files = filesIn(tarballOf(name).tarball);
    for (const file of ['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts'])
      expect(files).toContain(file);
    const exports = manifestIn(tarballOf(name).tarball).exports as Record<string, string | Record<string, string>>;
    const targets = Object.values(exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t)));
    for (const target of targets) expect(files, target).toContain(target.replace(/^\.\//, ''));
  });

  test("ships a package.json for users: no devDependencies, no scripts, none of the repository's fields", () => {
    const manifest = manifestIn(tarballOf(name).tarball);
    // The private @pol/doc-examples is a dev dependency of every package: no registry has it.
    expect(manifest.devDependencies).toBeUndefined();
    // The scripts build and test from files the tarball does not hold (tsconfig.build.json, vitest.config.ts).
    expect(manifest.scripts).toBeUndefined();
    expect(Object.keys(manifest).filter((field) => !publishedFields.has(field))).toEqual([]);
    // What it keeps is the package.json of the repository, the rest unchanged.
    const source = publishedPackages.find((p) => p.manifest.name === name)?.manifest;
    expect(manifest.exports).toEqual(source?.exports);
    const names = (deps: unknown) => Object.keys((deps as object | undefined) ?? {});
    expect(names(manifest.dependencies)).toEqual(names(source?.dependencies));
  });

  test('holds no test, type test or test support, and no build leftovers', () => {
    const files = filesIn(tarballOf(name).tarball);
    expect(files.filter(isTestFile)).toEqual([]);
    expect(files.filter((f) => f.endsWith('.tsbuildinfo') || f.includes('.vitest') || f.includes('node_modules/'))).toEqual([]);
  });

  test('imports nothing but itself, relative files, Node.js builtins and what it declares', () => {
    const { tarball } = tarballOf(name);
    const manifest = manifestIn(tarball);
    const declared = new Set([
      name,
      ...Object.keys((manifest.dependencies as Record<string, string> | undefined) ?? {}),
      ...Object.keys((manifest.peerDependencies as Record<string, string> | undefined) ?? {}),
    ]);
    const undeclared: string[] = [];
    for (const file of filesIn(tarball).filter((f) => /\.(d\.ts|ts|js|mjs)$/.test(f))) {
      for (const specifier of importsOf(fileIn(tarball, file))) {
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        if (!declared.has(packageOf(specifier))) undeclared.push(`${file}: ${specifier}`);
      }
    }
    expect(undeclared).toEqual([]);
  });

  test('names released versions of the other Pol packages, never a workspace: range', () => {
    const { tarball } = tarballOf(name);
    const manifest = manifestIn(tarball);
    expect(JSON.stringify(manifest)).not.toContain('workspace:');
    for (const field of ['dependencies', 'peerDependencies'] as const) {
      for (const [dep, range] of Object.entries((manifest[field] as Record<string, string> | undefined) ?? {})) {
        if (!dep.startsWith('@pol/')) continue;
        const target = publishedPackages.find((p) => p.manifest.name === dep);
        expect(range, dep).toBe(`^${target?.manifest.version}`);
      }
    }
  });
});
