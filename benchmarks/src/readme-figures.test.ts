/**
 * No figure in prose that a run does not write: outside their generated blocks (report-blocks.ts),
 * the READMEs (the root one, this package's, the packages' and the examples') hold no
 * measured-looking figure: a time (`4.4 µs`, `0.29 s`), a ratio (`1.05×`, `1.37x`), a percentage, a
 * number of bytes per operation (`16 B a call`, `2.1 KiB per task`) or of collections. Fenced code
 * blocks are left out: they are examples the docs tests run and check, or a program's output
 * shown as such. A number that is not a measurement (a configuration constant, a V8 limit) but
 * reads like one is allowed by name below, in the file it appears in.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { blocksIn, outsideBlocks } from './report-blocks.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Measured-looking figures. */
const figures: readonly RegExp[] = [
  /\d[\d,.]*\s?(?:ns|µs|us|ms)\b/g,
  /\d+\.\d+\s?s\b/g,
  /\d[\d,.]*×/g,
  /\b\d+\.\d+x\b/g,
  /\d[\d,.]*\s?%/g,
  /\d[\d,.]*\s?(?:B|KiB|MiB|GiB|bytes)\s+(?:a|per|each)\s+(?:call|step|task|carve|allocation|alloc|batch|operation|row|dispatch|submit|savepoint|frame)\b/g,
  /\d[\d,.]*\s?(?:GCs|collections)\b/g,
];

/** Figures that are not measurements, by file: the text around each, exactly. */
const allowed: Readonly<Record<string, readonly string[]>> = {
  // The harness's configuration (how long it warms up and samples), and what "0 B" stands for.
  'benchmarks/README.md': [
    'warmed up for 50 ms',
    'about 250 ms of samples',
    '(6 rounds of about 250 ms of each row)',
    'means less than 0.005 bytes per operation',
  ],
};

/** The READMEs checked. */
function readmes(): string[] {
  const under = (folder: string) =>
    readdirSync(join(root, folder))
      .map((name) => join(folder, name, 'README.md'))
      .filter((file) => existsSync(join(root, file)));
  return ['README.md', 'benchmarks/README.md', ...under('packages'), ...under('examples')];
}

/** The text with its fenced code blocks blanked, lines kept. */
function withoutCode(text: string): string {
  let fenced = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return '';
      }
      return fenced ? '' : line;
    })
    .join('\n');
}

/** `file:line: figure` for each measured-looking figure outside the generated blocks and code, less the allowed ones. */
function proseFigures(file: string, text: string, allow: readonly string[] = []): string[] {
  const found: string[] = [];
  withoutCode(outsideBlocks(text))
    .split('\n')
    .forEach((line, i) => {
      let rest = line;
      for (const phrase of allow) rest = rest.replaceAll(phrase, '');
      for (const pattern of figures)
        for (const m of rest.matchAll(pattern)) found.push(`${file}:${i + 1}: ${m[0]}  (${line.trim()})`);
    });
  return found;
}

describe('the READMEs quote only generated figures', () => {
  test('the detector sees a figure in prose, and none in a generated block, a code block or an allowed phrase', () => {
    const text = [
      'A step takes 4.4 µs, 1.05× the floor, 16 B a call.',
      '<!-- pol-bench:start why -->',
      'Generated: 5.1 µs.',
      '<!-- pol-bench:end -->',
      '```text',
      'time per batch: 11.18 ms',
      '```',
      'Warmed up for 50 ms.',
    ].join('\n');
    expect(proseFigures('X.md', text, ['for 50 ms'])).toEqual([
      'X.md:1: 4.4 µs  (A step takes 4.4 µs, 1.05× the floor, 16 B a call.)',
      'X.md:1: 1.05×  (A step takes 4.4 µs, 1.05× the floor, 16 B a call.)',
      'X.md:1: 16 B a call  (A step takes 4.4 µs, 1.05× the floor, 16 B a call.)',
    ]);
    expect(proseFigures('X.md', 'Sizes: 1,024 floats, 64 KiB, Node.js 20.16, 2^31 ticks, 3 layers × 4 pipelines.')).toEqual([]);
  });

  test.each(readmes())('%s', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    blocksIn(text); // every block is known and closed
    expect(proseFigures(file, text, allowed[file])).toEqual([]);
  });

  test('every allowed phrase is still there (the list holds nothing stale)', () => {
    for (const [file, phrases] of Object.entries(allowed)) {
      const text = withoutCode(outsideBlocks(readFileSync(join(root, file), 'utf8')));
      for (const phrase of phrases) expect(text, `${relative(root, join(root, file))}: ${phrase}`).toContain(phrase);
    }
  });
});
