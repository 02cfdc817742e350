/**
 * Pol's declaration files where users are: the packages installed from a local registry (as the
 * next release publishes them) into throwaway projects, one per TypeScript version from 5.4 to the
 * newest, and type-checked with `skipLibCheck: false` under the settings users have: targets
 * es2020, es2022 and esnext with their default libs, module nodenext and bundler, with the DOM
 * lib and without it. Each program is the root README's two quick starts (the JavaScript one
 * checked with `checkJs`, no JSDoc), a JavaScript kernel typed with JSDoc (whose verb must keep
 * its exact types), a host program that uses frames with `using`, regions and shared slabs, and
 * (wherever the DOM lib is, as WebGPU's types need it) a WebGPU program, the perceptron of
 * `@pol/webgpu/examples` included. Then, under TypeScript 5.9, the WebGPU program against every
 * `@webgpu/types` version the peer range of `@pol/webgpu` allows (from 6.0 on, the DOM lib declares
 * WebGPU and no `@webgpu/types` is read).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from '@pol/packaging';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Outcome, run, tail } from './commands.js';
import { type Published, publishPackages } from './published.js';

const minutes = (n: number) => n * 60_000;

/** Every minor line from 5.4 (the oldest with `module: preserve` and `esnext.disposable`) to the newest. */
const typescripts = ['5.4.5', '5.5.4', '5.6.3', '5.7.3', '5.8.3', '5.9.3', '6.0.3', '7.0.2'] as const;
type TypeScriptVersion = (typeof typescripts)[number];

/** The settings a program is checked under. */
interface Setting {
  readonly name: string;
  readonly compilerOptions: Record<string, unknown>;
  /** Whether the DOM lib is in (then the WebGPU program is too). */
  readonly dom: boolean;
}

const settings: readonly Setting[] = [
  {
    name: 'es2020, nodenext, default libs, Node types',
    dom: true,
    compilerOptions: { target: 'es2020', module: 'nodenext', types: ['node'] },
  },
  {
    name: 'es2022, nodenext, default libs, Node types',
    dom: true,
    compilerOptions: { target: 'es2022', module: 'nodenext', types: ['node'] },
  },
  {
    name: 'esnext, bundler, default libs (a browser app)',
    dom: true,
    compilerOptions: { target: 'esnext', module: 'preserve', moduleResolution: 'bundler', types: [] },
  },
  {
    name: 'es2022, nodenext, no DOM lib, Node types',
    dom: false,
    compilerOptions: { target: 'es2022', module: 'nodenext', lib: ['es2022'], types: ['node'] },
  },
  {
    name: 'esnext, nodenext, no DOM lib, Node types',
    dom: false,
    compilerOptions: { target: 'esnext', module: 'nodenext', lib: ['esnext'], types: ['node'] },
  },
];

/** The root README's quick start in `language`: the block after the sentence that introduces it. */
function quickStart(language: 'js' | 'ts'): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const intro = language === 'js' ? 'In plain JavaScript' : 'The same in TypeScript';
  const at = readme.indexOf(intro);
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(readme.slice(at));
  if (at < 0 || block === null) throw new Error(`README.md has no ${language} quick start after '${intro}'`);
  return block[1] as string;
}

const hostProgram = `import { Arena, claimRegion, createSharedSlab, mark, pointer, retract, type WasmMemory } from '@pol/arena';
import { alloc, describe, type HostArray, hostArray, scratchspace, Similar, Undef, withspace } from '@pol/core';
import { Allocating, Shadows, zeroShadows } from '@pol/verbs';
import { initMlp, seededRandom, softmax, trainStep } from '@pol/verbs/examples';

type F32 = HostArray<'float32'>;
const arena = new Arena(new ArrayBuffer(1 << 20), { byteOffset: 256, byteLength: 1 << 16, checked: true });
{
  using frame = scratchspace(arena);
  const t: F32 = alloc(frame, 'float32', 4);
  t.data.fill(1);
}
const x = hostArray(Float32Array.of(1, 2, 3, 4));
const { y } = softmax(arena, x);
const m = mark(arena);
const scaled = Allocating(
  describe((out: { y: F32 }, a: F32, o: { k: number }) => out.y.data.set(a.data.map((v) => v * o.k)), {
    outputs: (a: F32) => ({ y: Undef(a) }),
  }),
);
const twice: F32 = withspace(Similar(x), () => scaled(x, { k: 2 }).y);
retract(arena, m);
const mlp = initMlp(arena, seededRandom(1), 2, 4, 3);
const grads = Shadows(arena, mlp);
zeroShadows(grads);
trainStep;
const slab = createSharedSlab({ regions: 2, regionByteLength: 4096 });
{
  using mine = claimRegion(slab, { checked: true });
  mine.alloc('float64', [8]);
}
declare const memory: WasmMemory;
const wasmArena = new Arena(memory, { byteOffset: 1024, byteLength: 4096 });
const at: number = pointer(wasmArena.alloc('float32', [4]), memory);
export { at, twice, y };
`;

// A kernel typed with JSDoc, in plain JavaScript: its verb keeps the exact types (a wrong input
// is an error, the result's dtype is known), as a TypeScript kernel's does.
const jsdocProgram = `import { Arena } from '@pol/arena';
import { describe, hostArray, Undef } from '@pol/core';
import { Allocating } from '@pol/verbs';

/** @typedef {import('@pol/core').HostArray<'float32'>} F32 */

const scaleInto = describe(
  /**
   * @param {{ y: F32 }} out
   * @param {F32} x
   * @param {{ k: number }} options
   */
  function scaleInto(out, x, options) {
    for (let i = 0; i < x.data.length; i++) out.y.data[i] = (x.data[i] ?? 0) * options.k;
  },
  { outputs: (/** @type {F32} */ x) => ({ y: Undef(x) }) },
);
const scale = Allocating(scaleInto);
const x = hostArray(Float32Array.of(1, 2));
/** @type {F32} */
const y = scale(new Arena(new ArrayBuffer(256)), x, { k: 2 }).y;
// @ts-expect-error: a string is not an input
scale('x', { k: 2 });
// @ts-expect-error: the option k is a number
scale(x, { k: 'two' });
export { y };
`;

const gpuProgram = `import { capture, deviceArena, type GpuArray, upload } from '@pol/webgpu';
import { GpuKernels, type TrainResult, trainOnGpu } from '@pol/webgpu/examples';
import { alloc, scratchspace } from '@pol/core';

declare const device: GPUDevice;
const arena = deviceArena(device, 1 << 20);
const x: GpuArray<'float32'> = alloc(arena, 'float32', 256);
upload(x, new Float32Array(256));
scratchspace(arena, (frame) => alloc(frame, 'float32', 64));
const graph = capture(device, () => {}, { label: 'step' });
const kernels = new GpuKernels(device, { lr: 0.1 });
const trained: Promise<TrainResult> = trainOnGpu(device, { steps: 2 });
export { graph, kernels, trained, x };
`;

let work: string;
let published: Published | undefined;
/** Each TypeScript version's project, installing. */
const projects = new Map<TypeScriptVersion, { dir: string; install: Promise<Outcome> }>();

function makeProject(version: TypeScriptVersion): void {
  const dir = join(work, `ts-${version}`);
  mkdirSync(dir, { recursive: true });
  const versions = (published as Published).versions;
  const pol = Object.fromEntries(['@pol/core', '@pol/arena', '@pol/verbs', '@pol/webgpu'].map((n) => [n, versions.get(n)]));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify(
      {
        name: `pol-types-${version.replaceAll('.', '-')}`,
        private: true,
        type: 'module',
        dependencies: { ...pol, typescript: version, '@types/node': '20.19.43', '@webgpu/types': '0.1.74' },
      },
      null,
      2,
    ),
  );
  writeFileSync(join(dir, '.npmrc'), `@pol:registry=${(published as Published).registry.url}\n`);
  writeFileSync(join(dir, 'host.ts'), hostProgram);
  writeFileSync(join(dir, 'gpu.ts'), gpuProgram);
  writeFileSync(join(dir, 'quickstart.ts'), quickStart('ts'));
  writeFileSync(join(dir, 'quickstart.mjs'), quickStart('js'));
  writeFileSync(join(dir, 'jsdoc.mjs'), jsdocProgram);
  const install = run('npm', ['install', '--no-audit', '--no-fund'], dir, minutes(6)).catch(
    (error: unknown): Outcome => ({ status: -1, output: String(error) }),
  );
  projects.set(version, { dir, install });
}

/** `tsc -p` over `files` under `setting`, in a project; resolves to the outcome. */
function check(dir: string, setting: Setting, files: readonly string[], name: string): Promise<Outcome> {
  const config = join(dir, `tsconfig.${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        allowJs: true,
        checkJs: true,
        ...setting.compilerOptions,
      },
      files,
    }),
  );
  return run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', config], dir, minutes(3));
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'pol-types-'));
  published = await publishPackages(work);
  for (const version of typescripts) makeProject(version);
}, minutes(5));

afterAll(async () => {
  await published?.registry.stop();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, minutes(3));

describe.each(typescripts)('TypeScript %s', (version) => {
  test(
    'the packages, the quick starts (TypeScript, and JavaScript with checkJs) and the programs type-check under every setting',
    async () => {
      const project = projects.get(version);
      if (project === undefined) throw new Error('beforeAll has not run');
      const installed = await project.install;
      expect(installed.status, `npm install with TypeScript ${version}:\n${tail(installed)}`).toBe(0);
      const failures: string[] = [];
      for (const [i, setting] of settings.entries()) {
        const files = ['quickstart.ts', 'quickstart.mjs', 'jsdoc.mjs', 'host.ts', ...(setting.dom ? ['gpu.ts'] : [])];
        const outcome = await check(project.dir, setting, files, `s${i}`);
        if (outcome.status !== 0) failures.push(`${setting.name}:\n${tail(outcome, 30)}`);
      }
      expect(failures, failures.join('\n\n')).toEqual([]);
    },
    minutes(8),
  );
});

/** The versions of `@webgpu/types` a caret range of a 0.y.z version allows (the form the peer range has). */
function allowedBy(range: string, versions: readonly string[]): string[] {
  const caret = /^\^0\.(\d+)\.(\d+)$/.exec(range);
  if (caret === null) throw new Error(`@pol/webgpu's peer range for @webgpu/types is '${range}': teach this test that form`);
  const [minor, patch] = [Number(caret[1]), Number(caret[2])];
  return versions.filter((v) => {
    const m = /^0\.(\d+)\.(\d+)$/.exec(v);
    return m !== null && Number(m[1]) === minor && Number(m[2]) >= patch;
  });
}

test(
  'TypeScript 5.9: the WebGPU program against every @webgpu/types version the peer range of @pol/webgpu allows',
  async () => {
    const project = projects.get('5.9.3');
    if (project === undefined) throw new Error('beforeAll has not run');
    expect((await project.install).status).toBe(0);
    const manifest = JSON.parse(readFileSync(join(project.dir, 'node_modules', '@pol', 'webgpu', 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
    };
    const listed = JSON.parse(
      execFileSync('npm', ['view', '@webgpu/types', 'versions', '--json'], { encoding: 'utf8' }),
    ) as string[];
    const allowed = allowedBy(manifest.peerDependencies['@webgpu/types'] as string, listed);
    expect(allowed.length).toBeGreaterThan(10);
    const tarballs = join(work, 'webgpu-types');
    mkdirSync(tarballs, { recursive: true });
    const packed = await run(
      'npm',
      ['pack', ...allowed.map((v) => `@webgpu/types@${v}`), '--pack-destination', tarballs],
      work,
      minutes(5),
    );
    expect(packed.status, tail(packed)).toBe(0);
    const installedAt = join(project.dir, 'node_modules', '@webgpu', 'types');
    const setting = settings[1] as Setting;
    const failures: string[] = [];
    for (const version of allowed) {
      const tarball = readdirSync(tarballs).find((f) => f === `webgpu-types-${version}.tgz`);
      if (tarball === undefined) throw new Error(`npm pack made no tarball of @webgpu/types@${version}`);
      rmSync(installedAt, { recursive: true, force: true });
      mkdirSync(installedAt, { recursive: true });
      execFileSync('tar', ['-xzf', join(tarballs, tarball), '-C', installedAt, '--strip-components=1']);
      const outcome = await check(project.dir, setting, ['gpu.ts'], 'webgpu-types');
      if (outcome.status !== 0) failures.push(`@webgpu/types@${version}:\n${tail(outcome, 12)}`);
    }
    expect(failures, failures.join('\n\n')).toEqual([]);
  },
  minutes(12),
);
