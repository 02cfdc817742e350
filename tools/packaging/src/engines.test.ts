/**
 * The Node.js lines the suite runs on (`npm test` runs it under each) are the root package.json's
 * `engines.node`; every package promises the same range, and the READMEs name the same lines.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { root, rootManifest, workspacePackages } from './workspace.js';

const range = rootManifest.engines?.node ?? '';
const lines = [...range.matchAll(/\^(\d+)\./g)].map((m) => Number(m[1]));
/** `20, 22, 24 and 26`. */
const inWords = `${lines.slice(0, -1).join(', ')} and ${lines.at(-1)}`;

describe('engines', () => {
  test('the root names every tested line as a caret range (from its oldest usable release), and nothing else', () => {
    expect(lines.length).toBeGreaterThan(1);
    expect(range).toMatch(/^\^\d+\.\d+\.\d+( \|\| \^\d+\.\d+\.\d+)+$/);
    expect([...lines].sort((a, b) => a - b)).toEqual(lines);
  });

  test.each(workspacePackages.map((p) => [p.dir, p.manifest] as const))('%s promises the same Node.js lines', (_, manifest) => {
    expect(manifest.engines?.node).toBe(range);
  });

  test.each(['README.md', 'CONTRIBUTING.md'])('%s names the tested lines', (file) => {
    expect(readFileSync(join(root, file), 'utf8')).toContain(`Node.js ${inWords}`);
  });
});
