/**
 * Each starter template as a user gets it. The four packages are published to a local registry as
 * the next release publishes them; each template is copied out of the repository, installed with
 * npm (Pol's packages from that registry, everything else from the user's usual one), and its own
 * checks run: type check, build, tests (the browser template's in headless Chromium), and the
 * program itself. The registry stops when the file is done, however it ends.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { type Packed, root, workspacePackages } from '@pol/packaging';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Outcome, run, tail } from './commands.js';
import { publishPackages } from './published.js';
import type { Registry } from './registry.js';

const minutes = (n: number) => n * 60_000;
let work: string;
let registry: Registry | undefined;
let versions: ReadonlyMap<string, string>;
let packed: readonly Packed[];

const templates = workspacePackages.filter((p) => p.dir.startsWith('examples/'));
/** Each template's copy, and its `npm install`, started for all of them at once (they mostly wait on the network). */
const installs = new Map<string, { app: string; install: Promise<Outcome> }>();

/** Copy a template out of the repository, as a user does, and start `npm install` in the copy. */
function copyAndInstall(name: string, dir: string): void {
  const app = join(work, 'apps', name);
  expect(app.startsWith(root)).toBe(false);
  // What a user copies: the folder, without what the repository installed or built in it.
  const skip = new Set(['node_modules', 'dist', '.turbo', '.vitest-report.json']);
  cpSync(join(root, dir), app, { recursive: true, filter: (source) => !skip.has(basename(source)) });
  // Pol's packages from the local registry; everything else from the user's usual registry.
  writeFileSync(join(app, '.npmrc'), `@pol:registry=${registry?.url}\n`);
  const install = run('npm', ['install', '--no-audit', '--no-fund'], app, minutes(6)).catch(
    (error: unknown): Outcome => ({ status: -1, output: String(error) }),
  );
  installs.set(name, { app, install });
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'pol-registry-'));
  ({ registry, versions, packed } = await publishPackages(work));
  for (const t of templates) copyAndInstall(basename(t.dir), t.dir);
}, minutes(5));

afterAll(async () => {
  await registry?.stop();
  // The templates' node_modules: removing them takes a while on a busy machine.
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
}, minutes(3));

function expectSuccess(outcome: Outcome, what: string): void {
  expect(outcome.status, `${what} exited with ${outcome.status}:\n${tail(outcome)}`).toBe(0);
}

/** What a template's `npm start` must print, and the test's name for it. */
interface StartCheck {
  readonly what: string;
  readonly check: (outcome: Outcome) => void;
}

/** The training templates' (node-cpu, node-webgpu): the loss falls. */
const trainingCheck: StartCheck = {
  what: 'trains the perceptron: the loss falls',
  check: (outcome) => {
    const loss = /loss: (\d+\.\d+) -> (\d+\.\d+)/.exec(outcome.output);
    expect(loss, tail(outcome)).not.toBeNull();
    expect(Number(loss?.[2])).toBeLessThan(Number(loss?.[1]) / 5);
  },
};

/** The other templates', by folder name. */
const startChecks: Readonly<Record<string, StartCheck>> = {
  'node-wasm': {
    what: 'transforms with KissFFT: results match the reference, the steady loop calls no malloc and allocates nothing',
    check: (outcome) => {
      const text = outcome.output;
      expect(text.match(/ match$/gm)?.length, tail(outcome)).toBe(3);
      expect(text).not.toMatch(/MISMATCH/);
      expect(text, tail(outcome)).toContain('_malloc calls: 0, _free calls: 0; bytes written outside the region: 0');
      expect(text, tail(outcome)).toContain('JavaScript bytes allocated per call: 0 at the worst size');
    },
  },
  'node-workers': {
    what: 'splits a batch over a piscina pool: the result equals one thread, the workers carve nothing new, no bytes copied',
    check: (outcome) => {
      const text = outcome.output;
      expect(text, tail(outcome)).toMatch(/pooled Y equals the one-thread Y, bit for bit: ([\d,]+) of \1 values/);
      expect(text, tail(outcome)).toContain('after the first task: no worker carved a new array or moved its watermark');
      expect(text, tail(outcome)).toMatch(/: 0 B for its own work/);
      expect(text, tail(outcome)).toContain('bytes of X and Y copied per task: 0;');
      expect(text, tail(outcome)).toContain('claimed now: [false, false, false]');
    },
  },
};

/** Each package's name → the integrity of the tarball the registry serves for its release version. */
const served = new Map<string, string>();

test('the registry serves the four packages at their release versions, with released ranges on each other', async () => {
  for (const p of packed) {
    const response = await fetch(`${registry?.url}${p.name.replace('/', '%2f')}`);
    expect(response.status, p.name).toBe(200);
    const packument = (await response.json()) as {
      'dist-tags': { latest: string };
      versions: Record<string, { dependencies?: Record<string, string>; dist: { integrity: string } }>;
    };
    const version = versions.get(p.name) ?? '';
    expect(packument['dist-tags'].latest).toBe(version);
    served.set(p.name, packument.versions[version]?.dist.integrity ?? '');
    for (const [dep, range] of Object.entries(packument.versions[version]?.dependencies ?? {})) {
      if (dep.startsWith('@pol/')) expect(range, `${p.name} → ${dep}`).toBe(`^${versions.get(dep)}`);
    }
  }
});

describe.each(templates.map((t) => [basename(t.dir), t] as const))('%s, copied out of the repository', (name, template) => {
  let app: string;
  const scripts = (template.manifest.scripts as Record<string, string> | undefined) ?? {};
  const npm = (args: string[], timeout = minutes(5)) => run('npm', args, app, timeout);

  test(
    'npm install takes Pol at its release versions from the registry',
    async () => {
      const started = installs.get(name);
      if (started === undefined) throw new Error(`${name} was not copied out (see the file's beforeAll)`);
      app = started.app;
      expectSuccess(await started.install, 'npm install');
      const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { version?: string; integrity?: string }>;
      };
      const pol = Object.entries(lock.packages).filter(([path]) => /node_modules\/@pol\/[^/]+$/.test(path));
      expect(pol.length).toBeGreaterThan(0);
      for (const [path, entry] of pol) {
        const name = path.replace(/^.*node_modules\//, '');
        expect(entry.version, path).toBe(versions.get(name));
        // The very tarball the local registry serves (a lock file need not record where it came from).
        expect(entry.integrity, path).toBe(served.get(name));
      }
      // One copy of the WebGPU types in the program, whoever asks for them (a second one conflicts: TS6200).
      const webgpuTypes = Object.keys(lock.packages).filter((path) => path.endsWith('node_modules/@webgpu/types'));
      expect(webgpuTypes.length).toBeLessThanOrEqual(1);
    },
    minutes(6),
  );

  for (const script of ['typecheck', 'build', 'test'].filter((s) => scripts[s] !== undefined)) {
    test(
      `npm run ${script}`,
      async () => {
        expectSuccess(await npm(['run', script]), `npm run ${script}`);
      },
      minutes(5),
    );
  }

  if (scripts.start !== undefined) {
    const started = startChecks[name] ?? trainingCheck;
    test(
      `npm start ${started.what}`,
      async () => {
        const outcome = await npm(['start']);
        expectSuccess(outcome, 'npm start');
        started.check(outcome);
      },
      minutes(5),
    );
  }
});

test(
  "the oldest @webgpu/types @pol/webgpu's peer range allows type-checks its published sources",
  async () => {
    const published = JSON.parse(readFileSync(join(work, 'stage', '@pol+webgpu', 'package', 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
    };
    const range = published.peerDependencies['@webgpu/types'] ?? '';
    const floor = /^\^(\d+\.\d+\.\d+)$/.exec(range)?.[1];
    expect(floor, `the peer range '${range}' is a caret range`).toBeDefined();
    const app = join(work, 'apps', 'webgpu-types-floor');
    mkdirSync(app, { recursive: true });
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'webgpu-types-floor',
        private: true,
        type: 'module',
        dependencies: { '@pol/webgpu': `^${versions.get('@pol/webgpu')}`, '@webgpu/types': floor, typescript: '7.0.2' },
      }),
    );
    writeFileSync(join(app, '.npmrc'), `@pol:registry=${registry?.url}\n`);
    // The package's own sources (it ships them, copied out of node_modules so that they count as the
    // program's own), checked against those types; declaration files are skipped, as a project's
    // skipLibCheck does.
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023', 'ESNext.Disposable'],
          types: ['@webgpu/types'],
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: true,
          noEmit: true,
        },
        include: ['src'],
      }),
    );
    const install = await run('npm', ['install', '--no-audit', '--no-fund'], app, minutes(5));
    expect(install.status, tail(install)).toBe(0);
    expect(JSON.parse(readFileSync(join(app, 'node_modules', '@webgpu', 'types', 'package.json'), 'utf8')).version).toBe(floor);
    cpSync(join(app, 'node_modules', '@pol', 'webgpu', 'src'), join(app, 'src'), { recursive: true });
    expect(readdirSync(join(app, 'src')).some((f) => f.endsWith('.ts'))).toBe(true);
    const check = await run(join(app, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], app, minutes(3));
    expect(check.status, `tsc against @webgpu/types ${floor}:\n${tail(check)}`).toBe(0);
  },
  minutes(8),
);
