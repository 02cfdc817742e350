/**
 * Import cycles among the modules of a package's `src/`, from every relative `import … from`,
 * `export … from` and bare `import`: none, type-only imports counted (a type-only cycle still ties
 * two concepts into one, and becomes a runtime cycle the day a value crosses it).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { root } from './workspace.js';

// `import …/export … from './x.js'` over any number of lines (a statement's start is at a line's
// start, so doc-comment examples, which start with ` * `, never count), and `import './x.js'`;
// `import type` and `export type` statements included.
const fromClause = /^[ \t]*(?:import|export)\b[^;'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
const bareImport = /^[ \t]*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The relative specifiers `source` imports or re-exports from. */
function relativeImports(source: string): string[] {
  return [...source.matchAll(fromClause), ...source.matchAll(bareImport)].map((m) => m[1] as string);
}

/** The module file a specifier of `from` names (`./x.js` is `x.ts`, or `x/index.ts`), if it exists. */
function resolve(from: string, specifier: string): string | undefined {
  const base = join(dirname(from), specifier.replace(/\.js$/, ''));
  return [`${base}.ts`, join(base, 'index.ts')].find((file) => existsSync(file));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry.name) && !/\.test(-d)?\.ts$/.test(entry.name) ? [path] : [];
  });
}

/** Every cycle of `graph`, each as the path that closes it (`a → b → a`), at most one per strongly connected set. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      const s = state.get(next);
      if (s === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (s === undefined) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

/** Each module of `dir` (by its path in it), and the modules it imports. */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(dir)) {
    const edges = relativeImports(readFileSync(file, 'utf8')).map((s) => resolve(file, s));
    graph.set(
      relative(dir, file),
      edges.filter((e): e is string => e !== undefined).map((e) => relative(dir, e)),
    );
  }
  return graph;
}

const packages = readdirSync(join(root, 'packages'))
  .map((name) => join(root, 'packages', name, 'src'))
  .filter((dir) => existsSync(dir));

describe('import cycles', () => {
  test('the parser reads every form of a relative import, and the search finds a planted cycle', () => {
    const source = [
      "import { a } from './a.js';",
      "import type {\n  B,\n  C,\n} from './b.js';",
      "export { d } from '../d.js';",
      "export type * from './e.js';",
      "import './f.js';",
      "import { g } from '@pol/core';",
      " * import { h } from './h.js'; (a doc comment's example)",
    ].join('\n');
    expect(relativeImports(source).sort()).toEqual(['../d.js', './a.js', './b.js', './e.js', './f.js']);
    const planted = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
    ]);
    expect(cycles(planted)).toEqual([['a', 'b', 'c', 'a']]);
    expect(cycles(new Map([['a', ['a']]]))).toEqual([['a', 'a']]);
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });

  test.each(packages.map((dir) => [relative(root, dir), dir] as const))('%s: no cycle, type-only imports included', (_, dir) => {
    const graph = importGraph(dir);
    // The walk saw the package's imports (a parser that found none would pass vacuously).
    expect([...graph.values()].flat().length).toBeGreaterThan(0);
    expect(cycles(graph).map((c) => c.join(' → '))).toEqual([]);
  });
});
