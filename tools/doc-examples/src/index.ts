/**
 * Executable documentation, shared by every Pol package: each ```ts example in a package's doc
 * comments and README must type-check, run, and print what its `// value` comments say. A
 * package's `src/docs.test.ts` is one call:
 *
 * ```ts
 * import { docExamples } from '@pol/doc-examples';
 * docExamples({ root: new URL('..', import.meta.url), imports: { '@pol/arena': 'src/index.ts' } });
 * ```
 *
 * How an example states what it prints: a line with `console.log(...)` ends in a comment whose
 * text up to the first `: ` is what it prints, every value (strings too, so in quotes) written as
 * `util.inspect` writes it and `...` standing for anything (`console.log(a, b); // 1 [ 2, 3 ]: and why`). Lines without
 * `console.log` may carry any comment.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';

/** One fenced ```ts or ```js block: where it is, its language, and its code. */
export interface Example {
  /** `path:line`, relative to the package (the line of the opening fence's first code line). */
  readonly name: string;
  /** `ts`, or `js` for plain JavaScript (run as an ES module, type-checked as JavaScript). */
  readonly language: 'ts' | 'js';
  readonly code: string;
}

/** Names an example may use without importing them (a WebGPU `device`, say). */
export interface DocGlobals {
  /** TypeScript declarations of the names, as a global script (`declare const device: GPUDevice;`). */
  readonly declarations: string;
  /** Their values at run time, made once before the first example runs. */
  readonly values: () => Promise<Record<string, unknown>> | Record<string, unknown>;
  /** Called after the last example with what `values` made (destroy a device, say). */
  readonly dispose?: (values: Record<string, unknown>) => Promise<void> | void;
}

export interface DocExamplesOptions {
  /** The package's directory: the one holding `package.json`, `README.md` and `src/`. */
  readonly root: string | URL;
  /**
   * The package's own import specifiers and the source files they stand for, relative to `root`
   * (`{ '@pol/verbs': 'src/index.ts', '@pol/verbs/examples': 'src/examples/index.ts' }`), so that
   * examples run against the sources under test, not a stale build.
   */
  readonly imports: Readonly<Record<string, string>>;
  /**
   * Index files (relative to `root`) whose every export must appear in some example: a public
   * name without an example fails the suite.
   */
  readonly coverage?: readonly string[];
  /** `compilerOptions.types` for the examples (default `['node']`: a user's Node.js program). */
  readonly types?: readonly string[];
  /** Names the examples use without declaring them. */
  readonly globals?: DocGlobals;
  /** The Markdown file whose examples also run, relative to `root` (default `README.md`); `false` for none. */
  readonly readme?: string | false;
  /** Whether the doc comments of `src/` are read (default true). */
  readonly sources?: boolean;
  /** Give every example a fresh module registry (default true), so examples never share state. */
  readonly freshModules?: boolean;
  /** Per-example timeout in milliseconds. */
  readonly timeout?: number;
}

const fence = /^```(ts|js)\s*$/;

/**
 * The ```ts and ```js examples of one file. In a doc comment (`inComment`), each line's leading
 * `*` is dropped first. Only the exact info strings `ts` and `js` count: a block marked otherwise
 * is prose.
 */
export function examplesOf(file: string, text: string, inComment: boolean): Example[] {
  const lines = text.split('\n').map((line) => (inComment ? line.replace(/^\s*\* ?/, '') : line));
  const found: Example[] = [];
  let current: string[] | undefined;
  let language: Example['language'] = 'ts';
  let start = 0;
  lines.forEach((line, i) => {
    if (current === undefined) {
      const opened = fence.exec(line.trim());
      if (opened !== null) {
        current = [];
        language = opened[1] === 'js' ? 'js' : 'ts';
        start = i + 2;
      }
    } else if (line.trim() === '```') {
      found.push({ name: `${file}:${start}`, language, code: current.join('\n') });
      current = undefined;
    } else {
      current.push(line);
    }
  });
  if (current !== undefined) throw new Error(`${file}:${start}: a \`\`\`${language} block is never closed.`);
  return found;
}

/** Every TypeScript source under `dir` except tests and test support, as paths relative to `root`. */
export function sourceFiles(root: string, dir = 'src'): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'test-support' && entry.name !== 'node_modules') out.push(...sourceFiles(root, path));
    } else if (entry.name.endsWith('.ts') && !entry.name.includes('.test.') && !entry.name.includes('.test-d.')) {
      out.push(path);
    }
  }
  return out.sort();
}

/** The names an index file exports (`export { a, type B } from …`). */
export function exportedNames(text: string): string[] {
  return [...text.matchAll(/export \{([^}]*)\}/g)].flatMap((m) =>
    (m[1] ?? '')
      .split(',')
      .map((n) => n.replace(/^\s*type\s+/, '').trim())
      .map((n) => n.split(/\s+as\s+/).at(-1) ?? n)
      .filter((n) => n !== ''),
  );
}

/**
 * What an example says it prints: for each `console.log(` line with a trailing `// ` comment, the
 * comment up to its first `: `, as a pattern in which `...` matches anything.
 */
export function claimsOf(code: string): RegExp[] {
  return code
    .split('\n')
    .filter((line) => line.includes('console.log(') && line.includes('// '))
    .map((line) => (line.slice(line.lastIndexOf('// ') + 3).split(': ')[0] ?? '').trim())
    .map(
      (claim) =>
        new RegExp(
          `^${claim
            .split('...')
            .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
            .join('.*')}$`,
          's',
        ),
    );
}

/** Rewrite the package's own import specifiers to its sources, relative to the examples' folder. */
export function rewriteImports(code: string, imports: Readonly<Record<string, string>>, fromDir: string, root: string): string {
  let out = code;
  const specifiers = Object.keys(imports).sort((a, b) => b.length - a.length);
  for (const specifier of specifiers) {
    const target = relative(fromDir, join(root, imports[specifier] ?? '')).replace(/\.ts$/, '.js');
    for (const quote of ["'", '"']) out = out.replaceAll(`${quote}${specifier}${quote}`, `${quote}${target}${quote}`);
  }
  return out;
}

function tscPath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
}

/** Whether an example augments a module (`declare module '…' {`). */
export function augments(e: Example): boolean {
  return /^\s*declare module ['"]/m.test(e.code);
}

/** Register the documentation-examples suite of one package with vitest. */
export function docExamples(options: DocExamplesOptions): void {
  const root = typeof options.root === 'string' ? options.root : fileURLToPath(options.root);
  const out = join(root, '.doc-examples');
  const readme = options.readme ?? 'README.md';
  const examples: Example[] = [
    ...(options.sources === false ? [] : sourceFiles(root)).flatMap((f) =>
      examplesOf(f, readFileSync(join(root, f), 'utf8'), true),
    ),
    ...(readme === false ? [] : examplesOf(readme, readFileSync(join(root, readme), 'utf8'), false)),
  ];
  // A JavaScript example is an .mjs file: an ES module, as a user's `node example.mjs` runs it.
  const fileOf = (e: Example) => `${e.name.replace(/[^a-zA-Z0-9]+/g, '_')}.${e.language === 'js' ? 'mjs' : 'ts'}`;
  let globals: Record<string, unknown> = {};

  beforeAll(async () => {
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    for (const e of examples) {
      // `export {}` keeps an example without imports a module, so examples never share names.
      writeFileSync(join(out, fileOf(e)), `${rewriteImports(e.code, options.imports, out, root)}\nexport {};\n`);
    }
    if (options.globals !== undefined) writeFileSync(join(out, 'globals.d.ts'), `${options.globals.declarations}\n`);
    // Module augmentations (`declare module '@pol/core' { … }`) hold for a whole program, so an
    // example that augments is type-checked in a program of its own; the rest share one.
    const config = (include: string[]) =>
      JSON.stringify({
        extends: '../tsconfig.json',
        compilerOptions: { rootDir: '..', noEmit: true, types: options.types ?? ['node'] },
        include,
      });
    const globalsFile = options.globals === undefined ? [] : ['globals.d.ts'];
    // JavaScript examples are run, not type-checked: a JavaScript user's program is not either.
    const typed = examples.filter((e) => e.language === 'ts');
    writeFileSync(join(out, 'tsconfig.json'), config([...typed.filter((e) => !augments(e)).map(fileOf), ...globalsFile]));
    for (const e of typed.filter(augments)) {
      writeFileSync(join(out, `tsconfig.${fileOf(e)}.json`), config([fileOf(e), ...globalsFile]));
    }
    if (options.globals !== undefined) {
      globals = await options.globals.values();
      Object.assign(globalThis, globals);
    }
  });

  afterAll(async () => {
    for (const name of Object.keys(globals)) delete (globalThis as Record<string, unknown>)[name];
    await options.globals?.dispose?.(globals);
    rmSync(out, { recursive: true, force: true });
  });

  describe('documentation examples', () => {
    test('there are some', () => {
      expect(examples.length).toBeGreaterThan(0);
    });

    if (options.coverage !== undefined) {
      test.each(options.coverage.map((f) => [f]))('every name %s exports appears in an example', (index) => {
        const names = exportedNames(readFileSync(join(root, index), 'utf8'));
        expect(names.length).toBeGreaterThan(0);
        const missing = names.filter((name) => !examples.some((e) => new RegExp(`\\b${name}\\b`).test(e.code)));
        expect(missing).toEqual([]);
      });
    }

    test('they type-check', () => {
      const configs = [
        'tsconfig.json',
        ...examples.filter((e) => e.language === 'ts' && augments(e)).map((e) => `tsconfig.${fileOf(e)}.json`),
      ];
      const reports = configs.map((config) => {
        const result = spawnSync(process.execPath, [tscPath(), '-p', join(out, config)], { encoding: 'utf8' });
        return `${result.stdout}${result.stderr}${result.status === 0 ? '' : `(tsc -p ${config} exited with ${result.status})`}`;
      });
      expect(reports.join('')).toBe('');
    }, 120_000);

    test.each(examples.map((e) => [e.name, e] as const))(
      '%s runs and prints what it says',
      async (_, e) => {
        if (options.freshModules ?? true) vi.resetModules();
        const printed: string[] = [];
        const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
          printed.push(args.map((a) => inspect(a)).join(' '));
        });
        try {
          await import(/* @vite-ignore */ join(out, fileOf(e)));
        } finally {
          log.mockRestore();
        }
        const claims = claimsOf(e.code);
        expect(printed.length, `${e.name} printed ${printed.length} lines but claims ${claims.length}`).toBe(claims.length);
        claims.forEach((claim, i) => {
          expect(printed[i]).toMatch(claim);
        });
      },
      options.timeout ?? 20_000,
    );
  });
}
export { webAssemblyGlobals } from './webassembly.js';
