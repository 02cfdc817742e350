/// <reference types="node" />
// Every ```ts example in the doc comments of src/ and in README.md must type-check and run.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, '.doc-examples');

interface Example {
  readonly name: string;
  readonly code: string;
}

function examplesOf(file: string, text: string, inComments: boolean): Example[] {
  const lines = text.split('\n').map((line) => (inComments ? line.replace(/^\s*\* ?/, '') : line));
  const found: Example[] = [];
  let current: string[] | undefined;
  let startLine = 0;
  lines.forEach((line, i) => {
    if (current === undefined) {
      if (line.trim() === '```ts') {
        current = [];
        startLine = i + 1;
      }
    } else if (line.trim() === '```') {
      found.push({ name: `${file}:${startLine}`, code: current.join('\n') });
      current = undefined;
    } else {
      current.push(line);
    }
  });
  return found;
}

const sources = readdirSync(join(root, 'src')).filter((f) => f.endsWith('.ts') && !f.includes('.test'));
const examples: Example[] = [
  ...sources.flatMap((f) => examplesOf(`src/${f}`, readFileSync(join(root, 'src', f), 'utf8'), true)),
  ...examplesOf('README.md', readFileSync(join(root, 'README.md'), 'utf8'), false),
];
const fileOf = (e: Example) => `${e.name.replace(/[^a-zA-Z0-9]+/g, '_')}.ts`;

beforeAll(() => {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  for (const e of examples) {
    const code = e.code.replaceAll("'@pol/arena'", "'../src/index.js'");
    // `export {}` keeps an example without imports a module, so examples never share globals.
    writeFileSync(join(out, fileOf(e)), `${code}\nexport {};\n`);
  }
  writeFileSync(
    join(out, 'tsconfig.json'),
    JSON.stringify({
      extends: '../tsconfig.json',
      // A user's program: Node's globals (console, setTimeout) are there.
      compilerOptions: { rootDir: '..', noEmit: true, types: ['node'] },
      include: ['*.ts'],
    }),
  );
});

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('documentation examples', () => {
  test('every public export appears in an example', () => {
    const index = readFileSync(join(root, 'src', 'index.ts'), 'utf8');
    const names = [...index.matchAll(/export \{([^}]*)\}/g)].flatMap((m) =>
      (m[1] ?? '')
        .split(',')
        .map((n) => n.replace(/^\s*type\s+/, '').trim())
        .filter((n) => n !== ''),
    );
    expect(names.length).toBeGreaterThan(30);
    const missing = names.filter((name) => !examples.some((e) => new RegExp(`\\b${name}\\b`).test(e.code)));
    expect(missing).toEqual([]);
  });

  test('they type-check', () => {
    const tsc = join(root, '..', '..', 'node_modules', '.bin', 'tsc');
    const result = spawnSync(tsc, ['-p', join(out, 'tsconfig.json')], { encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  // An example's `console.log(...); // expected` comments say what it prints: the text before the
  // first ': ' (the rest explains), with values written as util.inspect writes them and `...`
  // standing for anything.
  test.each(examples.map((e) => [e.name, e] as const))('%s runs and prints what it says', async (_, e) => {
    vi.resetModules(); // a fresh storage registry for every example
    const printed: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      printed.push(args.map((a) => inspect(a)).join(' '));
    });
    try {
      await import(/* @vite-ignore */ join(out, fileOf(e)));
    } finally {
      log.mockRestore();
    }
    const claims = e.code
      .split('\n')
      .filter((line) => line.includes('console.log(') && line.includes('// '))
      .map((line) => (line.slice(line.lastIndexOf('// ') + 3).split(': ')[0] ?? '').trim());
    expect(printed.length).toBe(claims.length);
    claims.forEach((claim, i) => {
      const pattern = new RegExp(
        `^${claim
          .split('...')
          .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      );
      expect(printed[i]).toMatch(pattern);
    });
  });
});
