/**
 * Where a run's figures go and how the READMEs quote them: the GPU sections into a file named by
 * their adapter (tested on SwiftShader, and on a real adapter's description), a folder of files
 * read back (a `results.json` from before the split included), and the generated blocks.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adapterLabel, checkAdapter, resolveAdapter } from './gpu-environment.js';
import type { AdapterInfo, Measurement, Results } from './model.js';
import { json } from './report.js';
import { blocksIn, outsideBlocks, withReadmeBlocks } from './report-blocks.js';
import { adapterFileName, adapterOf, isReference, readResultFiles, splitResults } from './report-files.js';
import { onAdapter, runBenchmarks } from './run.js';

const swiftshader: AdapterInfo = {
  vendor: 'google',
  architecture: 'swiftshader',
  device: 'swiftshader-device-subzero-',
  description: 'SwiftShader driver 5.0.0',
  fallback: true,
  choice: 'swiftshader',
};
const hopper: AdapterInfo = {
  vendor: 'nvidia',
  architecture: 'hopper',
  device: '',
  description: 'NVIDIA H200',
  fallback: false,
  choice: 'system',
};

function row(id: string, section: string, timeNs: number, extra: Partial<Measurement> = {}): Measurement {
  return {
    id,
    section,
    label: id,
    pol: id.includes('pol'),
    unit: 'step',
    timeNs,
    p50Ns: timeNs,
    bytesPerOp: 0,
    ops: 1,
    ...extra,
  };
}

const hostSection = 'Host allocation, n = 16 float32';
const gpuSection = 'WebGPU step: 8 dispatches, 16 scratch arrays (CPU-side time, Dawn over SwiftShader)';

/** A run with a host section and a GPU section, on `adapter`. */
function run(adapter: AdapterInfo, date = '2026-12-02T00:00:00.000Z'): Results {
  const gpuTitle = onAdapter(gpuSection, adapter);
  const measurements = [
    row('host.pol', hostSection, 10),
    row('host.peer', hostSection, 20),
    row('gpu.prebuilt', gpuTitle, 100, { gpuObjects: 0 }),
    row('gpu.arena', gpuTitle, 104, { gpuObjects: 0 }),
    row('gpu.buffer-per-step', gpuTitle, 600, { gpuObjects: 24 }),
    row('gpu.pool', gpuTitle, 300, { gpuObjects: 8 }),
    row('gpu.replay', gpuTitle, 99, { gpuObjects: 0 }),
  ];
  return {
    environment: {
      node: 'v20.20.2',
      v8: '11',
      platform: 'linux',
      cpu: 'AMD EPYC',
      cores: 2,
      memoryGiB: 24,
      date,
      quick: false,
      gpu: `Dawn: ${adapter.vendor}, ${adapter.architecture}, ${adapter.description}`,
      adapter,
      harness: 'mitata',
    },
    measurements,
    comparisons: [
      {
        subject: 'host.pol',
        peer: 'host.peer',
        view: 'time-ratio',
        ratio: 0.5,
        overheadNs: -10,
        target: { kind: 'ratio-at-most', value: 0.6 },
        met: true,
      },
      {
        subject: 'gpu.arena',
        peer: 'gpu.prebuilt',
        view: 'time-ratio',
        ratio: 1.04,
        overheadNs: 4,
        target: { kind: 'ratio-at-most', value: 1.05 },
        met: true,
      },
      {
        subject: 'gpu.replay',
        peer: 'gpu.prebuilt',
        view: 'time-ratio',
        ratio: 0.99,
        overheadNs: -1,
        target: undefined,
        met: undefined,
      },
    ],
    sections: [hostSection, gpuTitle],
    gpuSections: [gpuTitle],
    seconds: 1,
  };
}

describe('the results files, by adapter', () => {
  test('a GPU section goes to a file named by its adapter: gpu-<vendor>-<architecture>', () => {
    expect(adapterFileName(swiftshader)).toBe('gpu-google-swiftshader');
    expect(adapterFileName(hopper)).toBe('gpu-nvidia-hopper');
    // Without an architecture, the device or the description names it.
    expect(adapterFileName({ ...hopper, architecture: '' })).toBe('gpu-nvidia-nvidia-h200');
    expect(adapterFileName({ ...hopper, vendor: 'Apple Inc.', architecture: 'metal-3' })).toBe('gpu-apple-inc-metal-3');
  });

  test('a run splits into results (off the GPU) and its adapter’s file, each holding its own comparisons', () => {
    const [main, gpu, ...more] = splitResults(run(swiftshader));
    expect(more).toEqual([]);
    expect(main?.name).toBe('results');
    expect(main?.results.sections).toEqual([hostSection]);
    expect(main?.results.measurements.map((m) => m.id)).toEqual(['host.pol', 'host.peer']);
    expect(main?.results.comparisons.map((c) => c.subject)).toEqual(['host.pol']);
    expect(main?.results.environment.gpu).toBeUndefined();
    expect(gpu?.name).toBe('gpu-google-swiftshader');
    expect(gpu?.source).toBe('gpu-google-swiftshader.json');
    expect(gpu?.results.sections).toEqual([gpuSection]);
    expect(gpu?.results.comparisons.map((c) => c.subject)).toEqual(['gpu.arena', 'gpu.replay']);
    expect(gpu?.results.environment.adapter).toEqual(swiftshader);
    // A run with no GPU section writes no GPU file, and one with only GPU sections no main file.
    expect(splitResults({ ...run(swiftshader), sections: [hostSection], gpuSections: [] }).map((f) => f.name)).toEqual([
      'results',
    ]);
    expect(splitResults({ ...run(swiftshader), sections: [gpuSection] }).map((f) => f.name)).toEqual(['gpu-google-swiftshader']);
  });

  test('on a real adapter the sections name it, and its file is not SwiftShader’s', () => {
    const files = splitResults(run(hopper));
    expect(files.map((f) => f.name)).toEqual(['results', 'gpu-nvidia-hopper']);
    expect(files[1]?.results.sections).toEqual([
      'WebGPU step: 8 dispatches, 16 scratch arrays (CPU-side time, Dawn on nvidia hopper (NVIDIA H200))',
    ]);
    expect(isReference(files[1] as never)).toBe(false);
    expect(onAdapter(gpuSection, swiftshader)).toBe(gpuSection);
    expect(adapterLabel(swiftshader)).toBe('SwiftShader');
  });

  describe('a folder of results', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'pol-results-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test('reads back every file, a results.json from before the split split as it is read, the newer part kept', () => {
      // Before the split: one results.json with the GPU sections in it, and no adapter recorded.
      const old = run(swiftshader, '2026-12-01T00:00:00.000Z');
      const { adapter: _, ...env } = old.environment;
      const { gpuSections: __, ...legacy } = old;
      writeFileSync(join(dir, 'results.json'), json({ ...legacy, environment: env }));
      let files = readResultFiles(dir);
      expect(files.map((f) => [f.name, f.source])).toEqual([
        ['results', 'results.json'],
        ['gpu-google-swiftshader', 'results.json'],
      ]);
      expect(adapterOf(files[1]?.results as Results)).toMatchObject({
        vendor: 'google',
        architecture: 'swiftshader',
        fallback: true,
      });
      // A later run's own SwiftShader file wins over that part; a real GPU's file comes last.
      for (const f of [...splitResults(run(swiftshader)), ...splitResults(run(hopper))].filter((f) => f.name !== 'results'))
        writeFileSync(join(dir, f.source), json(f.results));
      files = readResultFiles(dir);
      expect(files.map((f) => [f.name, f.source])).toEqual([
        ['results', 'results.json'],
        ['gpu-google-swiftshader', 'gpu-google-swiftshader.json'],
        ['gpu-nvidia-hopper', 'gpu-nvidia-hopper.json'],
      ]);
    });
  });
});

describe('the adapter choice', () => {
  test('auto takes the system adapter when it is a GPU, and SwiftShader otherwise', () => {
    expect(resolveAdapter('auto', () => hopper)).toBe('system');
    expect(resolveAdapter('auto', () => ({ ...swiftshader, choice: 'system' }))).toBe('swiftshader');
    expect(resolveAdapter('auto', () => undefined)).toBe('swiftshader');
    expect(resolveAdapter('system', () => undefined)).toBe('system');
  });

  test('--adapter system refuses a CPU implementation', () => {
    expect(() => checkAdapter({ ...swiftshader, choice: 'system' })).toThrow(/found no GPU, only google, swiftshader/);
    expect(() => checkAdapter(hopper)).not.toThrow();
    expect(() => checkAdapter(swiftshader)).not.toThrow();
  });

  test('a quick run of the gpu suite on SwiftShader records its adapter and routes its section to its file', async () => {
    const results = await runBenchmarks({ quick: true, log: () => undefined }, ['gpu']);
    expect(results.environment.adapter).toMatchObject({ vendor: 'google', architecture: 'swiftshader', fallback: true });
    expect(results.gpuSections).toEqual(results.sections);
    expect(splitResults(results).map((f) => f.name)).toEqual(['gpu-google-swiftshader']);
  }, 120_000);
});

describe('the generated blocks', () => {
  const swiftOnly = splitResults(run(swiftshader));
  const withGpu = [...swiftOnly, ...splitResults(run(hopper)).filter((f) => f.name !== 'results')];
  const readme = [
    '# A README',
    '<!-- pol-bench:start -->',
    'old',
    '<!-- pol-bench:end -->',
    'Prose.',
    '<!-- pol-bench:start targets gpu -->',
    '<!-- pol-bench:end -->',
    '<!-- pol-bench:start gpu-floors -->',
    '<!-- pol-bench:end -->',
  ].join('\n');

  test('until a real GPU’s file exists, the README says every GPU figure is SwiftShader’s; then each adapter is quoted apart', () => {
    const before = withReadmeBlocks(readme, swiftOnly, 'benchmarks/') as string;
    expect(before).toContain('**Every GPU figure here is SwiftShader’s**');
    expect(before).toContain('| gpu.arena (WebGPU, 8 dispatches, on SwiftShader) |');
    expect(before).toContain('**2 of 2 targets met.**');
    expect(before).toContain('- gpu.arena vs gpu.prebuilt: ≤ 1.05× the time.');
    expect(before).toContain(
      '| 8 dispatches, 16 scratch arrays | 6.00×, 24 objects | 3.00×, 8 objects | 1.00×, 0 objects | 1.04×, 0 objects | 0.99×, 0 objects |',
    );
    expect(before.split('\n').slice(0, 2).concat(before.split('\n').slice(-1))).toEqual([
      '# A README',
      '<!-- pol-bench:start -->',
      '<!-- pol-bench:end -->',
    ]);
    const after = withReadmeBlocks(readme, withGpu, 'benchmarks/') as string;
    expect(after).not.toContain('Every GPU figure here is SwiftShader’s');
    expect(after).toContain('On a GPU, nvidia hopper (NVIDIA H200)');
    // SwiftShader's table and the GPU's are apart: no row names both.
    const tables = after.split('\n').filter((line) => line.startsWith('| gpu.arena'));
    expect(tables).toHaveLength(2);
    expect(tables[0]).toContain('on SwiftShader');
    expect(tables[1]).toContain('on nvidia hopper');
    expect(after.match(/^On (SwiftShader|nvidia hopper \(NVIDIA H200\)), measured/gm)).toHaveLength(2);
  });

  test('a package’s README names the files by path, since its relative links would break on npm', () => {
    const text = withReadmeBlocks(readme, swiftOnly, '../../benchmarks/') as string;
    expect(text).toContain('`benchmarks/results/gpu-google-swiftshader.md`');
    expect(text).not.toContain('](../../');
  });

  test('blocks are found only as whole lines, refused when unknown or unclosed, and blanked for the figures test', () => {
    expect(blocksIn(readme).map((b) => [b.name, b.arg])).toEqual([
      ['results', undefined],
      ['targets', 'gpu'],
      ['gpu-floors', undefined],
    ]);
    expect(blocksIn('Quoted: `<!-- pol-bench:start why -->`.')).toEqual([]);
    expect(() => blocksIn('<!-- pol-bench:start nonsense -->\n<!-- pol-bench:end -->')).toThrow(/unknown block 'nonsense'/);
    expect(() => blocksIn('<!-- pol-bench:start why -->\nno end')).toThrow(/has no <!-- pol-bench:end --> line/);
    expect(outsideBlocks('a\n<!-- pol-bench:start why -->\n4.4 µs\n<!-- pol-bench:end -->\nb')).toBe(
      'a\n<!-- pol-bench:start why -->\n\n<!-- pol-bench:end -->\nb',
    );
    expect(withReadmeBlocks('no blocks', swiftOnly)).toBeUndefined();
  });
});
