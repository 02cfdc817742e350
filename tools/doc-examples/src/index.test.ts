import { describe, expect, test } from 'vitest';
import { claimsOf, examplesOf, exportedNames, rewriteImports } from './index.js';

describe('examplesOf', () => {
  test('finds ts and js blocks in doc comments and in Markdown, and ignores other fences', () => {
    const source = ['/**', ' * Text.', ' * ```ts', ' * const a = 1;', ' * ```', ' * ```sh', ' * ls', ' * ```', ' */'].join('\n');
    expect(examplesOf('src/a.ts', source, true)).toEqual([{ name: 'src/a.ts:4', language: 'ts', code: 'const a = 1;' }]);
    const markdown = [
      '# Title',
      '```ts',
      'let b = 2;',
      'b++;',
      '```',
      '```js',
      'let c = 3;',
      '```',
      '```javascript',
      'd',
      '```',
    ].join('\n');
    expect(examplesOf('README.md', markdown, false)).toEqual([
      { name: 'README.md:3', language: 'ts', code: 'let b = 2;\nb++;' },
      { name: 'README.md:7', language: 'js', code: 'let c = 3;' },
    ]);
  });

  test('refuses a block that is never closed', () => {
    expect(() => examplesOf('README.md', '```ts\nx', false)).toThrow(/a ```ts block is never closed/);
    expect(() => examplesOf('README.md', '```js\nx', false)).toThrow(/a ```js block is never closed/);
  });
});

describe('claimsOf', () => {
  test('reads what console.log lines say they print, up to the first ": "', () => {
    const [a, b, c] = claimsOf(
      [
        'console.log(x); // 4: the length',
        'f(); // not a claim',
        "console.log(s, [1]); // 'a...z' [ 1 ]",
        'console.log(y); // [ 1, ... ]',
      ].join('\n'),
    );
    expect('4').toMatch(a as RegExp);
    expect("'abcz' [ 1 ]").toMatch(b as RegExp);
    expect('[ 1, 2, 3 ]').toMatch(c as RegExp);
    expect('[ 2 ]').not.toMatch(c as RegExp);
  });
});

describe('exportedNames', () => {
  test('lists values and types, renamed exports by their public name', () => {
    expect(exportedNames("export { a, type B, c as d } from './x.js';\nexport {\n  e,\n} from './y.js';")).toEqual([
      'a',
      'B',
      'd',
      'e',
    ]);
  });
});

describe('rewriteImports', () => {
  test('points the package specifiers at its sources, longest first', () => {
    const code = "import { a } from '@pol/verbs';\nimport { b } from \"@pol/verbs/examples\";\nimport { c } from '@pol/core';";
    expect(
      rewriteImports(
        code,
        { '@pol/verbs': 'src/index.ts', '@pol/verbs/examples': 'src/examples/index.ts' },
        '/p/.doc-examples',
        '/p',
      ),
    ).toBe(
      "import { a } from '../src/index.js';\nimport { b } from \"../src/examples/index.js\";\nimport { c } from '@pol/core';",
    );
  });
});
