import fc from 'fast-check';
import { expect, test } from 'vitest';
import { signatureOf } from './parameters.js';

const names = (f: (...args: never[]) => unknown) => signatureOf(f)?.parameters.map((p) => p.name);

test('names, rest parameters and defaults, in every way a function is written', () => {
  expect(names(function softmaxInto(_out: unknown, _x: unknown, _options: unknown) {})).toEqual(['_out', '_x', '_options']);
  expect(names((a: unknown, b: unknown) => [a, b])).toEqual(['a', 'b']);
  expect(names(async (a: unknown) => a)).toEqual(['a']);
  expect(names(new Function('x', 'return x') as never)).toEqual(['x']);
  const method = {
    run(o: unknown, x: unknown) {
      return [o, x];
    },
  };
  expect(names(method.run)).toEqual(['o', 'x']);
  const sig = signatureOf((o: unknown, { a }: { a: number }, [b]: number[], c = { d: [1, 2] }, ...rest: unknown[]) => [
    o,
    a,
    b,
    c,
    rest,
  ]);
  expect(sig?.parameters).toEqual([
    { name: 'o', rest: false, defaulted: false },
    { name: undefined, rest: false, defaulted: false },
    { name: undefined, rest: false, defaulted: false },
    { name: 'c', rest: false, defaulted: true },
    { name: 'rest', rest: true, defaulted: false },
  ]);
  expect(sig?.variadic).toBe(true);
});

test('strings, templates and comments in the list do not confuse it', () => {
  const template = `b = \`(${'$'}{1 + 2}, )\``; // b = `(${1 + 2}, )`, a template with a substitution
  const f = new Function('a = "x, y)"', template, '/* c, */ d', 'return [a, b, d]') as never;
  expect(names(f)).toEqual(['a', 'b', 'd']);
});

test('a body that reads `arguments` makes the function variadic', () => {
  expect(
    signatureOf(function (o: unknown) {
      // biome-ignore lint/complexity/noArguments: what is tested.
      return [o, arguments.length];
    })?.variadic,
  ).toBe(true);
  expect(signatureOf((o: unknown) => o)?.variadic).toBe(false);
});

test('native and bound functions cannot be read: undefined', () => {
  expect(signatureOf(Math.max)).toBeUndefined();
  expect(signatureOf(((a: unknown) => a).bind(null))).toBeUndefined();
});

test('property: the names of any simple parameter list, with or without defaults', () => {
  const ident = fc
    .stringMatching(/^[a-z][a-z0-9]{0,5}$/)
    .filter(
      (s) =>
        ![
          'do',
          'if',
          'in',
          'for',
          'let',
          'new',
          'try',
          'var',
          'case',
          'else',
          'enum',
          'null',
          'this',
          'true',
          'void',
          'with',
          'break',
          'catch',
          'class',
          'const',
          'false',
          'super',
          'throw',
          'while',
          'yield',
          'delete',
          'export',
          'import',
          'public',
          'return',
          'static',
          'switch',
          'typeof',
          'default',
          'extends',
          'finally',
          'package',
          'private',
          'continue',
          'debugger',
          'function',
          'arguments',
          'interface',
          'protected',
          'implements',
          'instanceof',
          'await',
          'eval',
        ].includes(s),
    );
  const param = fc.tuple(
    ident,
    fc.option(fc.constantFrom('1', "'a,b'", '[1, 2]', '{ x: (1, 2) }', '() => 3'), { nil: undefined }),
  );
  fc.assert(
    fc.property(fc.uniqueArray(param, { selector: ([n]) => n, maxLength: 6 }), (list) => {
      const text = list.map(([n, d]) => (d === undefined ? n : `${n} = ${d}`));
      const f = new Function(...text, 'return 0') as never;
      const sig = signatureOf(f);
      expect(sig?.parameters.map((p) => p.name)).toEqual(list.map(([n]) => n));
      expect(sig?.parameters.map((p) => p.defaulted)).toEqual(list.map(([, d]) => d !== undefined));
    }),
  );
});
