#!/usr/bin/env node
// The two things a new user does with a fresh clone, on a machine with only Node.js and npm:
//   npm run demo   set up, build, and run the demo
//   npm test       set up, then build and run every check and test under each tested Node.js
//                  line (this machine's first, the others fetched through the npm registry),
//                  ending with "N passed, N failed" over all of them
// Both install what they need themselves (the pinned pnpm, the workspace's packages, and, as root
// on Debian/Ubuntu, the chromium package whose SwiftShader gives WebGPU a real adapter).
//
//   node scripts/pol.mjs test [--node 20,24 | --node current]
//   node scripts/pol.mjs demo
//   node scripts/pol.mjs bench [--node 20,24] [benchmark options]   (npm run bench:lines)
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fetchLine, majorOf, parseLines, testedLines } from './lib/node-lines.mjs';
import { removeReports, testedPackages, totals, watchReports } from './lib/reports.mjs';
import {
  ensureSwiftShader,
  install,
  log,
  must,
  root,
  run,
  runAsync,
  swiftShaderAdvice,
  webgpuEnv,
  withPnpm,
} from './lib/setup.mjs';

/**
 * The packages whose tests run under the first line only, with what they are in words. The rest
 * of the suite takes about 20 s a line on 2 cores, the browser page's test included; installing
 * the templates from a registry with npm and running them takes longer than that, and what it
 * checks (what a release publishes, and what npm makes of it) does not depend on the line.
 */
const firstLineOnly = [{ name: '@pol/registry', what: 'the templates installed from a local registry' }];

/** The turbo tasks of the suite other than the tests, and the same in words for the summary. */
const checks = ['build', 'typecheck', 'lint:package', 'docs'];
const tasksInWords = 'build, type check, package lint (publint, attw), API reference';

function option(argv, name) {
  const i = argv.indexOf(name);
  if (i === -1) return undefined;
  const value = argv[i + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${name} needs a value.`);
  return value;
}

/**
 * The runs, in order: this machine's node first when it is one of `lines`, then each other line,
 * fetched through the registry. A line that cannot be fetched stays in the list with its error.
 */
function plan(lines) {
  const here = majorOf(process.version);
  const runs = [];
  if (lines.includes(here)) runs.push({ line: here, version: process.version, bin: undefined, how: "this machine's node" });
  else
    log(
      `this machine's Node.js ${process.version} is not among the lines to test (${lines.join(', ')}): all of them are fetched`,
    );
  const others = lines.filter((l) => l !== here);
  if (others.length > 0) {
    log(`fetching Node.js ${others.join(', ')} through the npm registry (npx --yes node@N; npx caches them for the next run)`);
  }
  for (const line of others) {
    const fetched = fetchLine(line);
    if (fetched.error !== undefined) {
      console.error(`[pol] Node.js ${line}: ${fetched.error}`);
      runs.push({ line, error: fetched.error });
      continue;
    }
    console.log(
      `[pol] Node.js ${line}: ${fetched.version}, ${fetched.bin}${fetched.note === undefined ? '' : ` (${fetched.note})`}`,
    );
    runs.push({ ...fetched, how: `npx node@${line}` });
  }
  return runs;
}

/** One line's run of the suite: every turbo task, in every package (or all but `firstLineOnly`). */
async function runLine(entry, first, packages, baseEnv) {
  const label = `Node.js ${entry.version}`;
  const started = performance.now();
  const excluded = first ? [] : firstLineOnly;
  const scope = packages.filter((p) => !excluded.some((e) => e.name === p.name));
  const env = { ...baseEnv, POL_NODE_LINE: String(entry.line) };
  if (entry.bin !== undefined) env.PATH = `${entry.bin}:${env.PATH ?? ''}`;
  log(
    `${label} (${entry.how}): ${tasksInWords}, and every test` +
      (excluded.length === 0 ? '' : `, except ${excluded.map((e) => e.what).join(', ')}, which ran under the first line`),
  );
  const turbo = (tasks, extra = []) =>
    runAsync(
      ...withPnpm([
        'exec',
        'turbo',
        'run',
        ...tasks,
        ...excluded.map((e) => `--filter=!${e.name}`),
        '--continue',
        '--output-logs=errors-only',
        // As many tasks at once as there are cores: every test task runs its own pool of workers,
        // and oversubscribing a small machine makes the longer property tests run past their timeouts.
        `--concurrency=${Math.max(2, availableParallelism())}`,
        ...extra,
      ]),
      { env },
    );
  const checked = await turbo(checks);
  removeReports(packages);
  // The JSON report comes from the command line, not from each package's vitest configuration, so
  // that the starter templates' configurations stay what a project copied out of the repository
  // needs (turbo gives the arguments after `--` to the test tasks only).
  const tested = await watchReports(scope, '  ', () =>
    turbo(['test'], ['--', '--reporter=default', '--reporter=json', '--outputFile.json=.vitest-report.json']),
  );
  const counts = totals(scope);
  const problems = [];
  if (checked !== 0) problems.push(`a ${tasksInWords} task failed (see above)`);
  if (tested !== 0) problems.push('a test task failed (see above)');
  if (counts.missing.length > 0) problems.push(`no test report from ${counts.missing.join(', ')}`);
  if (counts.passed === 0) problems.push('no test ran');
  return { ...entry, counts, problems, excluded, seconds: (performance.now() - started) / 1000 };
}

/** The checks that do not depend on the Node.js line (native binaries), once. */
function lineIndependentChecks() {
  const problems = [];
  log('checking the size budget (.size-limit.json)');
  if (run(...withPnpm(['exec', 'size-limit'])) !== 0)
    problems.push('a package is over its size budget (see above, and .size-limit.json)');
  log('biome check');
  if (run(...withPnpm(['exec', 'biome', 'check', '.'])) !== 0)
    problems.push('biome check failed (run: pnpm exec biome check --write .)');
  return problems;
}

async function test(argv) {
  const lines = parseLines(option(argv, '--node'));
  install();
  if (!ensureSwiftShader()) {
    console.error(`[pol] WebGPU tests need ${swiftShaderAdvice}, then run again.`);
    process.exit(1);
  }
  const runs = plan(lines);
  const packages = testedPackages();
  const baseEnv = webgpuEnv();
  const results = [];
  let first = true;
  for (const entry of runs) {
    if (entry.error !== undefined) {
      results.push(entry);
      continue;
    }
    results.push(await runLine(entry, first, packages, baseEnv));
    first = false;
  }
  const independent = lineIndependentChecks();

  log('per Node.js line:');
  const firstRun = results.find((r) => r.error === undefined);
  let passed = 0;
  let failed = 0;
  let notRun = 0;
  let ok = independent.length === 0;
  for (const r of results) {
    if (r.error !== undefined) {
      notRun++;
      ok = false;
      console.log(`[pol]   Node.js ${r.line}: NOT RUN: it could not be fetched (see above)`);
      continue;
    }
    passed += r.counts.passed;
    failed += r.counts.failed;
    if (r.counts.failed > 0 || r.problems.length > 0) ok = false;
    const scope =
      r.excluded.length === 0
        ? 'all tests'
        : `all tests but ${r.excluded.map((e) => e.what).join(', ')}, which ran under ${firstRun?.version}`;
    const verdict = r.problems.length === 0 ? `${tasksInWords}: passed` : r.problems.join('; ');
    const skipped = r.counts.skipped > 0 ? `, ${r.counts.skipped} skipped` : '';
    console.log(
      `[pol]   Node.js ${r.version} (${r.how}, ${Math.round(r.seconds)} s): ${r.counts.passed} passed, ${r.counts.failed} failed${skipped} (${scope}); ${verdict}`,
    );
  }
  for (const problem of independent) console.log(`[pol]   ${problem}`);
  if (independent.length === 0)
    console.log('[pol]   size budget and biome (once: they do not depend on the Node.js line): passed');
  const summary = `${passed} passed, ${failed} failed${notRun > 0 ? `, ${notRun} Node.js line${notRun > 1 ? 's' : ''} not run` : ''}`;
  writeFileSync(join(root, '.test-summary'), `${summary}\n`);
  console.log(summary);
  process.exit(ok && failed === 0 && passed > 0 ? 0 : 1);
}

function demo() {
  install();
  // As root on Debian/Ubuntu, install what the WebGPU half needs without a GPU, as `npm test` does.
  const swiftShader = ensureSwiftShader();
  log('building the demo');
  must(
    ...withPnpm([
      'exec',
      'turbo',
      'run',
      'build',
      '--filter=./examples/node-cpu...',
      '--filter=./examples/node-wasm...',
      '--filter=./examples/node-workers...',
      '--filter=./examples/node-webgpu...',
      '--output-logs=errors-only',
    ]),
  );
  log('running examples/node-cpu');
  must(...withPnpm(['--filter', './examples/node-cpu', 'run', '--silent', 'start']));
  log('running examples/node-wasm');
  must(...withPnpm(['--filter', './examples/node-wasm', 'run', '--silent', 'start']));
  log('running examples/node-workers');
  must(...withPnpm(['--filter', './examples/node-workers', 'run', '--silent', 'start']));
  // Runs on WebGPU when an adapter is there (a GPU, or SwiftShader from Debian's chromium package);
  // otherwise it says why it skipped, and succeeds.
  if (!swiftShader) {
    log(
      `no SwiftShader on this machine: the WebGPU half runs only with a GPU and its Vulkan driver. Without a GPU it needs ${swiftShaderAdvice}, then npm run demo again.`,
    );
  }
  log('running examples/node-webgpu');
  must(...withPnpm(['--filter', './examples/node-webgpu', 'run', '--silent', 'start']), { env: webgpuEnv() });
}

/**
 * The benchmarks under each of some Node.js lines, one after the other, then their figures side
 * by side: `npm run bench:lines -- --node 20,24 [--only verbs] [--quick]`. Every other argument
 * goes to the benchmarks' main.js. Each line writes its own results folder (under --out, by
 * default benchmarks/dist/lines), and the READMEs are left alone: they show `pnpm bench`'s run.
 */
async function bench(argv) {
  const lines = parseLines(option(argv, '--node') ?? testedLines.join(','));
  const passed = argv.filter(
    (arg, i) => arg !== '--node' && argv[i - 1] !== '--node' && arg !== '--out' && argv[i - 1] !== '--out',
  );
  const out = resolve(option(argv, '--out') ?? join(root, 'benchmarks', 'dist', 'lines'));
  install();
  const webgpu = ensureSwiftShader();
  if (!webgpu && !passed.includes('--only')) console.error(`[pol] the WebGPU benchmarks need ${swiftShaderAdvice}.`);
  log('building the benchmarks');
  must(...withPnpm(['exec', 'turbo', 'run', 'build', '--filter=@pol/benchmarks...', '--output-logs=errors-only']));
  const runs = plan(lines);
  const failed = runs.filter((r) => r.error !== undefined).map((r) => r.line);
  const dirs = [];
  const env = webgpuEnv();
  if (env.XDG_RUNTIME_DIR === undefined) {
    // The Vulkan loader complains on every device it opens without a runtime directory.
    env.XDG_RUNTIME_DIR = join(tmpdir(), `pol-webgpu-runtime-${process.getuid?.() ?? 'user'}`);
    mkdirSync(env.XDG_RUNTIME_DIR, { recursive: true, mode: 0o700 });
  }
  for (const entry of runs.filter((r) => r.error === undefined)) {
    const dir = join(out, `node-${entry.line}`);
    const node = entry.bin === undefined ? process.execPath : join(entry.bin, 'node');
    log(`benchmarks on Node.js ${entry.version} (${entry.how}), into ${dir}`);
    const status = await runAsync(node, ['--expose-gc', 'dist/main.js', ...passed, '--out', dir, '--no-readme'], {
      cwd: join(root, 'benchmarks'),
      env,
    });
    if (status === 0) dirs.push(dir);
    else failed.push(entry.line);
  }
  if (dirs.length > 1)
    must(process.execPath, ['dist/main.js', '--compare', dirs.join(','), '--out', out], { cwd: join(root, 'benchmarks') });
  if (failed.length > 0) {
    console.error(`[pol] the benchmarks did not run on Node.js ${failed.join(', ')} (see above).`);
    process.exit(1);
  }
}

const [task, ...rest] = process.argv.slice(2);
try {
  if (task === 'test') await test(rest);
  else if (task === 'demo') demo();
  else if (task === 'bench') await bench(rest);
  else {
    console.error(
      'usage: node scripts/pol.mjs test [--node 20,24 | --node current] | demo | bench [--node 20,24] [benchmark options]',
    );
    process.exit(2);
  }
} catch (error) {
  console.error(`[pol] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(2);
}
