/**
 * `pnpm bench`: run every benchmark, print the environment and the tables, and write
 * results/results.md, results/chart.svg and results/results.json; a full run into the default
 * folder also refreshes the results block (between its markers) of the root README's performance
 * section and of this package's README.
 *
 *   node --expose-gc dist/main.js [--quick] [--out DIR] [--only host,verbs,gpu,gpu-steps,core,wasm] [--no-readme] [--render]
 *   node dist/main.js --compare DIR,DIR[,…] [--out DIR]
 *
 * `--render` rewrites the report, the chart and the README blocks from the folder's results.json,
 * measuring nothing (for a change to the report's format). `--compare` puts the results.json of
 * runs on several Node.js lines side by side (what `npm run bench:lines` ends with), into
 * lines.md in `--out` (by default the first folder's parent).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeEnvironment, environment } from './env.js';
import { linesPage } from './lines.js';
import { gcExposed } from './measure.js';
import type { Results } from './model.js';
import { chart, json, markdown, withReadmeBlock } from './report.js';
import { runBenchmarks, type SuiteName, suiteNames } from './run.js';

const here = dirname(fileURLToPath(import.meta.url));
const packageRoot = join(here, '..');
const defaultOut = join(packageRoot, 'results');
const rootReadme = join(packageRoot, '..', 'README.md');
const packageReadme = join(packageRoot, 'README.md');

function usage(message: string): never {
  console.error(
    `${message}\nusage: node --expose-gc dist/main.js [--quick] [--out DIR] [--only ${suiteNames.join(',')}] [--no-readme] [--render]\n` +
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
    } else usage(`unknown argument '${arg}'`);
  }
  return { quick, out, only, readme, render, compare, outGiven };
}

const options = parse(process.argv.slice(2));
if (options.compare !== undefined) {
  const runs = options.compare.map((dir) => JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8')) as Results);
  const out = options.outGiven ? options.out : dirname(options.compare[0] ?? '.');
  const page = linesPage(runs);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'lines.md'), `${page}\n`);
  console.log(`\n${page}\n\n[bench] wrote ${join(out, 'lines.md')}`);
  process.exit(0);
}
let results: Results;
if (options.render) {
  // Re-render the report, the chart and the README blocks from the JSON of the last run, measuring nothing.
  results = JSON.parse(readFileSync(join(options.out, 'results.json'), 'utf8')) as Results;
  options.quick = results.environment.quick;
  options.only = [...suiteNames];
} else {
  if (!gcExposed) {
    console.error('[bench] run node with --expose-gc: bytes per operation are measured between explicit collections.');
    process.exit(2);
  }
  console.log(`[bench] ${describeEnvironment(environment(options.quick, undefined))}`);
  results = await runBenchmarks({ quick: options.quick, log: (line) => console.log(line) }, options.only);
}
mkdirSync(options.out, { recursive: true });
const page = markdown(results);
writeFileSync(join(options.out, 'results.md'), `${page}\n`);
writeFileSync(join(options.out, 'chart.svg'), chart(results));
if (!options.render) writeFileSync(join(options.out, 'results.json'), json(results));
console.log(`\n${page}\n`);
console.log(
  `[bench] measured on Node.js ${results.environment.node}; wrote ${join(options.out, 'results.md')}, chart.svg${options.render ? '' : ' and results.json'}`,
);

// The READMEs show the latest full run of every suite; a quick or partial run leaves them alone.
const complete = !options.quick && options.only.length === suiteNames.length && options.out === defaultOut;
if (options.readme && complete) {
  for (const [file, prefix] of [
    [rootReadme, 'benchmarks/'],
    [packageReadme, ''],
  ] as const) {
    const readme = readFileSync(file, 'utf8');
    const updated = withReadmeBlock(readme, results, prefix);
    if (updated === undefined) console.log(`[bench] ${file} has no <!-- pol-bench:start/end --> markers; left it alone`);
    else if (updated !== readme) {
      writeFileSync(file, updated);
      console.log(`[bench] refreshed the results block of ${file}`);
    }
  }
}
