/**
 * The starter templates (examples/*) stand alone, so that a copy of one outside the repository
 * installs and runs: no path out of their folder, released versions of Pol's packages (which the
 * next release satisfies), npm scripts for everything their READMEs tell a user to run.
 * tools/registry then installs each copy from a registry and runs it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { releaseVersions, satisfiesCaret } from './release.js';
import { root, workspacePackages } from './workspace.js';

const templates = workspacePackages.filter((p) => p.dir.startsWith('examples/'));

/** A template's own files, as a user copying the folder gets them (no dependencies, no build output). */
function ownFiles(dir: string): string[] {
  const skip = new Set(['node_modules', 'dist', '.turbo', '.vitest-report.json', '.doc-examples']);
  const walk = (at: string): string[] =>
    readdirSync(at)
      .filter((name) => !skip.has(name))
      .flatMap((name) => (statSync(join(at, name)).isDirectory() ? walk(join(at, name)) : [join(at, name)]));
  return walk(join(root, dir)).map((file) => relative(join(root, dir), file));
}

describe('caret ranges, as the template checks read them', () => {
  test.each([
    ['0.1.0', '^0.1.0', true],
    ['0.1.7', '^0.1.0', true],
    ['0.2.0', '^0.1.0', false],
    ['0.0.9', '^0.1.0', false],
    ['0.0.3', '^0.0.3', true],
    ['0.0.4', '^0.0.3', false],
    ['1.4.0', '^1.2.3', true],
    ['2.0.0', '^1.2.3', false],
    ['1.2.2', '^1.2.3', false],
  ] as const)('%s against %s: %s', (version, range, expected) => {
    expect(satisfiesCaret(version, range)).toBe(expected);
  });

  test('anything but a caret range is refused', () => {
    expect(() => satisfiesCaret('0.1.0', 'workspace:^')).toThrow(/not a caret range/);
  });
});

describe.each(templates.map((t) => [t.dir, t] as const))('%s', (dir, template) => {
  const manifest = template.manifest;
  const pol = Object.entries({
    ...((manifest.dependencies as Record<string, string> | undefined) ?? {}),
    ...((manifest.devDependencies as Record<string, string> | undefined) ?? {}),
  }).filter(([name]) => name.startsWith('@pol/'));

  test("asks for released versions of Pol's packages, which the next release satisfies", async () => {
    expect(pol.length).toBeGreaterThan(0);
    const versions = await releaseVersions();
    for (const [name, range] of pol) {
      expect(range, name).toMatch(/^\^\d+\.\d+\.\d+$/);
      const next = versions.get(name);
      expect(next, name).toBeDefined();
      expect(satisfiesCaret(next ?? '', range), `${name}@${range} against the next release, ${next}`).toBe(true);
    }
  });

  test('reaches nothing outside its folder (no ../ path, no shared configuration)', () => {
    const reaching: string[] = [];
    for (const file of ownFiles(dir).filter((f) => /\.(ts|mts|js|mjs|json|html)$/.test(f))) {
      const text = readFileSync(join(root, dir, file), 'utf8');
      // `..` twice or more climbs out of src/ and then out of the template.
      for (const m of text.matchAll(/['"`(]((?:\.\.\/){2,}[^'"`)]*)/g)) reaching.push(`${file}: ${m[1]}`);
      if (text.includes('vitest.shared')) reaching.push(`${file}: vitest.shared`);
    }
    expect(reaching).toEqual([]);
  });

  test("builds Pol's packages first in the repository (turbo.json names them: its ranges do not match the workspace's versions, so turbo's graph cannot)", () => {
    const turbo = JSON.parse(readFileSync(join(root, 'turbo.json'), 'utf8')) as {
      tasks: Record<string, { dependsOn?: string[] }>;
    };
    for (const task of ['build', 'typecheck', 'test']) {
      const dependsOn = turbo.tasks[`${manifest.name}#${task}`]?.dependsOn ?? [];
      for (const [name] of pol) expect(dependsOn, `${manifest.name}#${task}`).toContain(`${name}#build`);
    }
  });

  test('has npm scripts for its checks: typecheck, build and test', () => {
    const scripts = (manifest.scripts as Record<string, string> | undefined) ?? {};
    for (const script of ['typecheck', 'build', 'test']) expect(scripts[script], script).toBeDefined();
    expect(JSON.stringify(scripts)).not.toMatch(/\bpnpm\b|turbo/);
  });
});
