/**
 * `pnpm bench`: run every benchmark, print the environment and the tables, and write them into
 * results/: the sections measured on the WebGPU adapter into a file named by it
 * (`gpu-<vendor>-<architecture>.json` and `.md`: `gpu-google-swiftshader` on SwiftShader), the
 * others into results.json and results.md, and the chart of both into chart.svg (a real GPU's
 * sections get their own chart, `gpu-….svg`). A full run into the default folder also rewrites the
 * generated blocks (between `pol-bench:start` and `pol-bench:end` lines) of the READMEs: the root
 * one, this package's, the packages' and the examples'.
 *
 *   node --expose-gc dist/main.js [--quick] [--out DIR] [--only host,verbs,gpu,gpu-steps,core,frames,wasm,workers,tfjs]
 *                                 [--adapter auto|swiftshader|system] [--no-readme] [--render]
 *   node dist/main.js --compare DIR,DIR[,…] [--out DIR]
 *
 * `--adapter` is where the GPU sections run: `swiftshader` (Debian's, a CPU implementation of
 * Vulkan), `system` (the GPU the system's Vulkan drivers give; refused when they give none), or
 * `auto`, the default: `system` when a hardware adapter is there, else `swiftshader`.
 * `--render` rewrites the pages, the charts and the README blocks from the folder's results
 * files, measuring nothing (for a change to the report's format). `--compare` puts the
 * results.json of runs on several Node.js lines side by side (what `npm run bench:lines` ends
 * with), into lines.md in `--out` (by default the first folder's parent).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeEnvironment, environment } from './env.js';
import { adapterChoices, adapterLabel, chooseAdapter } from './gpu-environment.js';
import { linesPage } from './lines.js';
import { gcExposed } from './measure.js';
import type { AdapterChoice, Results } from './model.js';
import { chart, json, markdown } from './report.js';
import { withReadmeBlocks } from './report-blocks.js';
import {
  adapterOf,
  isReference,
  MAIN_FILE,
  mergeResults,
  type ResultFile,
  readResultFiles,
  splitResults,
} from './report-files.js';
import { gpuSuiteNames, runBenchmarks, type SuiteName, suiteNames } from './run.js';

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, '..');
const defaultOut = join(packageRoot, 'results');
const repositoryRoot = join(packageRoot, '..');

/** The READMEs whose generated blocks a full run rewrites: the root one, this package's, and each package's and example's. */
function readmes(): string[] {
  const inFolders = (folder: string) =>
    existsSync(join(repositoryRoot, folder))
      ? readdirSync(join(repositoryRoot, folder))
          .map((name) => join(repositoryRoot, folder, name, 'README.md'))
          .filter((file) => existsSync(file))
      : [];
  return [join(repositoryRoot, 'README.md'), join(packageRoot, 'README.md'), ...inFolders('packages'), ...inFolders('examples')];
}

function usage(message: string): never {
  console.error(
    `${message}\nusage: node --expose-gc dist/main.js [--quick] [--out DIR] [--only ${suiteNames.join(',')}] [--adapter ${adapterChoices.join('|')}] [--no-readme] [--render]\n` +
      '       node dist/main.js --compare DIR,DIR[,…] [--out DIR]',
  );
  process.exit(2);
}

interface Options {
  quick: boolean;
  out: string;
  only: SuiteName[];
  readme: boolean;
  render: boolean;
  /** Where the GPU sections run. */
  adapter: AdapterChoice | 'auto';
  /** Result folders to put side by side, one per Node.js line. */
  compare: string[] | undefined;
  /** Whether `--out` was given. */
  outGiven: boolean;
}

function parse(argv: readonly string[]): Options {
  let quick = false;
  let render = false;
  let out = defaultOut;
  let only: SuiteName[] = [...suiteNames];
  let readme = true;
  let compare: string[] | undefined;
  let outGiven = false;
  let adapter: AdapterChoice | 'auto' = 'auto';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') quick = true;
    else if (arg === '--render') render = true;
    else if (arg === '--no-readme') readme = false;
    else if (arg === '--out') {
      out = resolve(argv[++i] ?? usage('--out needs a folder'));
      outGiven = true;
    } else if (arg === '--compare')
      compare = (argv[++i] ?? usage('--compare needs result folders')).split(',').map((d) => resolve(d));
    else if (arg === '--only') {
      const names = (argv[++i] ?? usage('--only needs suite names')).split(',');
      for (const n of names) if (!(suiteNames as readonly string[]).includes(n)) usage(`unknown suite '${n}'`);
      only = names as SuiteName[];
    } else if (arg === '--adapter') {
      const choice = argv[++i] ?? usage('--adapter needs auto, swiftshader or system');
      if (!(adapterChoices as readonly string[]).includes(choice)) usage(`unknown adapter '${choice}'`);
      adapter = choice as AdapterChoice | 'auto';
    } else usage(`unknown argument '${arg}'`);
  }
  return { quick, out, only, readme, render, adapter, compare, outGiven };
}

const options = parse(process.argv.slice(2));
if (options.compare !== undefined) {
  // Each folder's reference files as one run (the sections off the GPU, and SwiftShader's).
  const runs = options.compare.map(
    (dir) => mergeResults(readResultFiles(dir).filter(isReference)) ?? usage(`--compare: no results in ${dir}`),
  );
  const out = options.outGiven ? options.out : dirname(options.compare[0] ?? '.');
  const page = linesPage(runs);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'lines.md'), `${page}\n`);
  console.log(`\n${page}\n\n[bench] wrote ${join(out, 'lines.md')}`);
  process.exit(0);
}
let fresh: ResultFile[] = [];
if (options.render) {
  // Re-render the pages, the charts and the README blocks from the results files of the folder, measuring nothing.
  if (readResultFiles(options.out).length === 0) usage(`--render: no results.json or gpu-*.json in ${options.out}`);
  options.only = [...suiteNames];
} else {
  if (!gcExposed) {
    console.error('[bench] run node with --expose-gc: bytes per operation are measured between explicit collections.');
    process.exit(2);
  }
  console.log(`[bench] ${describeEnvironment(environment(options.quick, undefined))}`);
  if (options.only.some((name) => gpuSuiteNames.includes(name))) {
    const choice = chooseAdapter(options.adapter);
    console.log(`[bench] WebGPU: --adapter ${options.adapter}${options.adapter === 'auto' ? ` chose ${choice}` : ''}`);
  }
  const results: Results = await runBenchmarks({ quick: options.quick, log: (line) => console.log(line) }, options.only);
  // Each part into its own file: the GPU sections into their adapter's.
  fresh = splitResults(results);
  mkdirSync(options.out, { recursive: true });
  for (const f of fresh) writeFileSync(join(options.out, f.source), json(f.results));
}

// The pages and charts of every results file of the folder: what this run wrote, and what it left.
const files = readResultFiles(options.out);
const reference = files.filter(isReference);
const describeFile = (f: ResultFile) => {
  if (f.name === MAIN_FILE) return 'the sections off the GPU';
  const adapter = adapterOf(f.results);
  return `the WebGPU sections on ${adapter === undefined ? 'an unnamed adapter' : adapterLabel(adapter)}`;
};
const merged = mergeResults(reference);
if (merged !== undefined) writeFileSync(join(options.out, 'chart.svg'), chart(merged));
for (const f of files) {
  const own = !isReference(f);
  if (own) writeFileSync(join(options.out, `${f.name}.svg`), chart(f.results));
  const others = files.filter((o) => o !== f).map((o) => ({ file: `${o.name}.md`, what: describeFile(o) }));
  const page = markdown(f.results, {
    ...(f.name === MAIN_FILE ? {} : { title: `Pol benchmarks: ${describeFile(f)}` }),
    chart: own ? `${f.name}.svg` : 'chart.svg',
    others,
  });
  writeFileSync(join(options.out, `${f.name}.md`), `${page}\n`);
  if (options.render || fresh.some((x) => x.name === f.name)) console.log(`\n${page}\n`);
}
console.log(
  `[bench] wrote ${files.map((f) => `${f.name}.md`).join(', ')} and the charts${options.render ? '' : `, and ${fresh.map((f) => f.source).join(', ')}`} in ${options.out}`,
);

// The READMEs show the latest full run of every suite; a quick or partial run leaves them alone.
const complete = (options.render || (!options.quick && options.only.length === suiteNames.length)) && options.out === defaultOut;
if (options.readme && complete) {
  for (const file of readmes()) {
    const readme = readFileSync(file, 'utf8');
    const prefix = `${relative(dirname(file), packageRoot).replaceAll('\\', '/')}/`.replace(/^\/$/, '');
    const updated = withReadmeBlocks(readme, files, prefix);
    if (updated !== undefined && updated !== readme) {
      writeFileSync(file, updated);
      console.log(`[bench] refreshed the generated blocks of ${relative(repositoryRoot, file)}`);
    }
  }
}
