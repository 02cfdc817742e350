#!/usr/bin/env node
// The two things a new user does with a fresh clone, on a machine with only Node.js and npm:
//   npm run demo   set up, build, and run the demo
//   npm test       set up, build, and run every check and test, ending with "N passed, N failed"
// Both install what they need themselves (the pinned pnpm, the workspace's packages, and, as root
// on Debian/Ubuntu, the chromium package whose SwiftShader gives WebGPU tests a real adapter).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pnpmVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
const swiftshaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';

function log(message) {
  console.log(`\n[pol] ${message}`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function must(command, args, options) {
  const status = run(command, args, options);
  if (status !== 0) {
    console.error(`[pol] '${command} ${args.join(' ')}' failed with exit code ${status}.`);
    process.exit(status);
  }
}

/** The pinned pnpm: the one on PATH if it is that version, else through npx. */
function pnpm() {
  try {
    const found = execFileSync('pnpm', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (found === pnpmVersion) return ['pnpm', []];
  } catch {
    // not installed
  }
  return ['npx', ['--yes', `pnpm@${pnpmVersion}`]];
}

function pnpmRun(args, options) {
  const [command, prefix] = pnpm();
  return run(command, [...prefix, ...args], options);
}

function install() {
  log(`installing the workspace with pnpm ${pnpmVersion}`);
  const [command, prefix] = pnpm();
  must(command, [...prefix, 'install', '--frozen-lockfile']);
}

/** WebGPU tests need a Vulkan driver: Debian's chromium ships SwiftShader. Install it when we can. */
function hasVulkanLoader() {
  try {
    return execFileSync('ldconfig', ['-p'], { encoding: 'utf8' }).includes('libvulkan.so.1');
  } catch {
    return false;
  }
}

function ensureSwiftShader() {
  if (!existsSync(join(root, 'packages/webgpu'))) return;
  if (existsSync(swiftshaderIcd) && hasVulkanLoader()) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) {
    console.error(
      `[pol] WebGPU tests need SwiftShader (${swiftshaderIcd}) and the Vulkan loader. Install Debian/Ubuntu's ` +
        'chromium and libvulkan1 packages (sudo apt-get install -y chromium libvulkan1) and run again.',
    );
    process.exit(1);
  }
  log('installing chromium and libvulkan1 (SwiftShader, a CPU Vulkan driver, gives WebGPU tests a real adapter)');
  must('apt-get', ['update']);
  must('apt-get', ['install', '-y', '--no-install-recommends', 'chromium', 'libvulkan1'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

function reports() {
  const dirs = ['packages', 'examples', 'tools'].flatMap((d) => {
    const full = join(root, d);
    return existsSync(full) ? readdirSync(full).map((name) => join(full, name)) : [];
  });
  dirs.push(join(root, 'benchmarks'));
  return dirs.map((d) => join(d, '.vitest-report.json'));
}

function test() {
  install();
  ensureSwiftShader();
  for (const file of reports()) rmSync(file, { force: true });
  const env = { ...process.env };
  if (existsSync(swiftshaderIcd) && env.VK_ICD_FILENAMES === undefined) env.VK_ICD_FILENAMES = swiftshaderIcd;
  log('building, type-checking, linting packages (publint, attw), testing, and generating the API reference');
  const status = pnpmRun(
    [
      'exec',
      'turbo',
      'run',
      'build',
      'typecheck',
      'lint:package',
      'test',
      'docs',
      '--continue',
      '--output-logs=errors-only',
      // As many tasks at once as there are cores: every test task runs its own pool of workers,
      // and oversubscribing a small machine makes the longer property tests run past their timeouts.
      `--concurrency=${Math.max(2, availableParallelism())}`,
    ],
    {
      env,
    },
  );
  log('checking the size budget (.size-limit.json)');
  const size = pnpmRun(['exec', 'size-limit']);
  const lint = pnpmRun(['exec', 'biome', 'check', '.']);

  let passed = 0;
  let failed = 0;
  let files = 0;
  for (const file of reports()) {
    if (!existsSync(file)) continue;
    files++;
    const report = JSON.parse(readFileSync(file, 'utf8'));
    passed += report.numPassedTests ?? 0;
    failed += (report.numFailedTests ?? 0) + (report.numFailedTestSuites ?? 0);
  }
  const summary = `${passed} passed, ${failed} failed`;
  writeFileSync(join(root, '.test-summary'), `${summary}\n`);
  if (status !== 0) console.error('[pol] a build, type check, package lint, test or API reference task failed (see above).');
  if (size !== 0) console.error('[pol] a package is over its size budget (see above, and .size-limit.json).');
  if (lint !== 0) console.error('[pol] biome check failed (run: pnpm exec biome check --write .).');
  if (files === 0 || passed === 0) console.error('[pol] no test ran.');
  console.log(summary);
  process.exit(status !== 0 || size !== 0 || lint !== 0 || failed > 0 || passed === 0 ? 1 : 0);
}

function demo() {
  install();
  log('building the demo');
  must(
    ...withPnpm([
      'exec',
      'turbo',
      'run',
      'build',
      '--filter=./examples/node-cpu...',
      '--filter=./examples/node-webgpu...',
      '--output-logs=errors-only',
    ]),
  );
  log('running examples/node-cpu');
  must(...withPnpm(['--filter', './examples/node-cpu', 'run', '--silent', 'start']));
  // Runs on WebGPU when an adapter is there (a GPU, or SwiftShader from Debian's chromium package);
  // otherwise it says why it skipped, and succeeds.
  const env = { ...process.env };
  if (existsSync(swiftshaderIcd) && env.VK_ICD_FILENAMES === undefined) env.VK_ICD_FILENAMES = swiftshaderIcd;
  log('running examples/node-webgpu');
  must(...withPnpm(['--filter', './examples/node-webgpu', 'run', '--silent', 'start']), { env });
}

function withPnpm(args) {
  const [command, prefix] = pnpm();
  return [command, [...prefix, ...args]];
}

const task = process.argv[2];
if (task === 'test') test();
else if (task === 'demo') demo();
else {
  console.error('usage: node scripts/pol.mjs test|demo');
  process.exit(2);
}
