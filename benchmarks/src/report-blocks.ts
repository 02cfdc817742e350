/**
 * The READMEs' generated blocks: every figure a README quotes is written here, from the results
 * files, between a start and an end marker, each alone on its line:
 *
 *   <!-- pol-bench:start -->                 the results: which runs, the targets table, the chart
 *   <!-- pol-bench:start why -->             the root README's *Why*: what allocation costs, measured
 *   <!-- pol-bench:start targets host,… -->  the targets of the suites whose ids start `host.`, …
 *   <!-- pol-bench:start workers -->         the workers suite, a row per size
 *   <!-- pol-bench:start gpu-floors -->      the WebGPU steps as ratios to their floors, a table per adapter
 *   <!-- pol-bench:end -->
 *
 * `pnpm bench` rewrites them after a full run, `--render` from the results already written; the
 * prose around them holds no measured figure (`readme-figures.test.ts` checks).
 */
import { adapterLabel } from './gpu-environment.js';
import type { Measurement, Results } from './model.js';
import { formatBytes, formatNs } from './op.js';
import { formatCount, speedText, targetGroups, targetsMet, targetsTable, targetText } from './report.js';
import { adapterOf, isReference, MAIN_FILE, type ResultFile, splitResults } from './report-files.js';

export const README_START = '<!-- pol-bench:start -->';
export const README_END = '<!-- pol-bench:end -->';

const START = /^<!-- pol-bench:start(?: ([a-z][a-z-]*)(?: ([^\s]+))?)? -->$/;

/** A block's lines (markers excluded), from the results files; `prefix` leads from the README's folder to this package's. */
type Block = (files: readonly ResultFile[], prefix: string, arg: string | undefined) => string[];

function measurement(files: readonly ResultFile[], id: string): Measurement | undefined {
  for (const f of files) {
    const m = f.results.measurements.find((x) => x.id === id);
    if (m !== undefined) return m;
  }
  return undefined;
}

/** `on 2026-12-02: Node.js v20.20.2, AMD EPYC (2 cores)` */
function when(r: Results): string {
  const env = r.environment;
  return `on ${env.date.slice(0, 10)}: Node.js ${env.node}, ${env.cpu} (${env.cores} cores)${env.quick ? ' (QUICK MODE: meaningless figures)' : ''}`;
}

/**
 * A results file, for a reader: a link from a README in the repository's tree of this package, or,
 * from a README that is published on its own (a package's, whose relative links would break on
 * npm), the file's path in the repository.
 */
function link(prefix: string, file: string): string {
  return prefix.startsWith('../') ? `\`benchmarks/results/${file}\`` : `[${file}](${prefix}results/${file})`;
}

/** The run the reference files come from, and where each adapter's sections were measured. */
function runsLine(ref: readonly ResultFile[]): string {
  const main = ref.find((f) => f.name === MAIN_FILE);
  const parts: string[] = [];
  if (main !== undefined) parts.push(when(main.results));
  for (const f of ref) {
    if (f.name === MAIN_FILE) continue;
    const env = f.results.environment;
    const same = main !== undefined && main.results.environment.date === env.date;
    const adapter = adapterOf(f.results);
    const name = env.gpu ?? (adapter === undefined ? 'an unnamed adapter' : adapterLabel(adapter));
    parts.push(`WebGPU on ${name}${same ? '' : ` ${when(f.results)}`}`);
  }
  return parts.join('; ');
}

function filesLine(files: readonly ResultFile[], prefix: string): string {
  const pages = files.map((f) => link(prefix, `${f.name}.md`)).join(', ');
  const raw = [...new Set(files.map((f) => f.source))].map((s) => link(prefix, s)).join(', ');
  const method = prefix.startsWith('../') ? '`benchmarks/README.md`' : `[${prefix}README.md](${prefix}README.md)`;
  return `Every figure: ${pages} (raw: ${raw}); the method: ${method}.`;
}

const swiftShaderOnly =
  '**Every GPU figure here is SwiftShader’s**: a CPU implementation of Vulkan, so they are WebGPU’s CPU-side costs on ' +
  'these cores, not a GPU’s. No run on a real GPU adapter is recorded yet.';

/** The results: the runs, the targets table of the reference run (SwiftShader's GPU rows named so), the chart, then a table per real GPU. */
const resultsBlock: Block = (files, prefix) => {
  const ref = files.filter(isReference);
  const real = files.filter((f) => !isReference(f));
  const { met, targeted } = targetsMet(ref);
  const lines = [
    `Measured by \`pnpm bench\` ${runsLine(ref)}. **${met} of ${targeted} targets met.** ${filesLine(ref, prefix)}`,
    '',
  ];
  if (real.length === 0 && ref.some((f) => f.name !== MAIN_FILE)) lines.push(swiftShaderOnly, '');
  const chart = prefix.startsWith('../')
    ? `The chart of every row: ${link(prefix, 'chart.svg')}.`
    : `![Time per operation, Pol beside its peers (log scale)](${prefix}results/chart.svg)`;
  lines.push(targetsTable(ref), '', chart);
  for (const f of real) {
    const adapter = adapterOf(f.results);
    const counts = targetsMet([f]);
    lines.push(
      '',
      `On a GPU, ${adapter === undefined ? 'an unnamed adapter' : adapterLabel(adapter)}: measured by \`pnpm bench\` ${when(f.results)}. ` +
        `**${counts.met} of ${counts.targeted} targets met.** ${filesLine([f], prefix)}`,
      '',
      targetsTable([f]),
    );
  }
  return lines;
};

/** The root README's *Why*: the cost of a fresh array against an arena's, and of a WebGPU step by each means. */
const whyBlock: Block = (files, prefix) => {
  const ref = files.filter(isReference);
  const m = (id: string) => measurement(ref, id);
  const sentences: string[] = [];
  const [new1, new64, steady1, steady64] = [
    'host.new-float32array.1024',
    'host.new-float32array.65536',
    'host.arena-steady.1024',
    'host.arena-steady.65536',
  ].map(m);
  const main = ref.find((f) => f.name === MAIN_FILE) ?? ref[0];
  if (new1 && new64 && steady1 && steady64) {
    sentences.push(
      `\`new Float32Array(1024)\` takes ${formatNs(new1.timeNs)} and ${formatBytes(new1.bytesPerOp)}, its garbage collection included, ` +
        `and \`new Float32Array(65536)\` ${formatNs(new64.timeNs)} and ${formatBytes(new64.bytesPerOp)}, where a Pol arena in a steady loop ` +
        `hands back the same arrays in ${range([steady1.timeNs, steady64.timeNs], formatNs)} and ${range([steady1.bytesPerOp, steady64.bytesPerOp], formatBytes)}, whatever their size.`,
    );
  }
  const gpu = ['gpu.buffer-per-step', 'gpu.pool', 'gpu.arena', 'gpu.replay', 'gpu.prebuilt'].map(m);
  const [perStep, pool, arena, replay, floor] = gpu;
  if (perStep && pool && arena && replay && floor) {
    const step = perStep.section.replace(/^[^:]*: /, '').replace(/ \(.*$/, '');
    const on = ref.map((f) => adapterOf(f.results)).find((a) => a !== undefined);
    sentences.push(
      `A small WebGPU step (${step}) costs ${formatNs(perStep.timeNs)} of CPU time when it creates its buffers and bind groups, ` +
        `${formatNs(pool.timeNs)} with a buffer pool keyed by size (as TensorFlow.js does it), ${formatNs(arena.timeNs)} on a Pol device ` +
        `arena with its bind-group cache, and ${formatNs(replay.timeNs)} replayed from a captured graph, against ${formatNs(floor.timeNs)} ` +
        `with everything made beforehand${on === undefined ? '' : ` (on ${adapterLabel(on)})`}.`,
    );
  }
  const [tfHost, polHost, tfGpu, polGpu] = [
    'tfjs-host.mlp.tfjs',
    'tfjs-host.mlp.pol',
    'tfjs-gpu.mlp.tfjs.e2e',
    'tfjs-gpu.mlp.replay.e2e',
  ].map(m);
  if (tfHost && polHost) {
    sentences.push(
      `A training step of the examples' perceptron takes ${formatNs(tfHost.timeNs)} in TensorFlow.js on its CPU backend and ` +
        `${formatNs(polHost.timeNs)} in Pol on an arena${tfGpu && polGpu ? `; on WebGPU, end to end, ${formatNs(tfGpu.timeNs)} against ${formatNs(polGpu.timeNs)} for Pol's replay` : ''}.`,
    );
  }
  if (sentences.length === 0) return ['The run in the results folder measured none of the figures this paragraph quotes.'];
  const date = main === undefined ? '' : `, the run of ${main.results.environment.date.slice(0, 10)}`;
  return [
    `Measured in this repository (\`pnpm bench\`${date}; every figure: ${ref.map((f) => link(prefix, `${f.name}.md`)).join(', ')}): ${sentences.join(' ')}`,
  ];
};

/** `11.0–12.2 ns`, `4.2 KiB–1.1 MiB`, or one figure where both ends read the same. */
function range(values: readonly number[], format: (v: number) => string): string {
  const lo = format(Math.min(...values));
  const hi = format(Math.max(...values));
  if (lo === hi) return lo;
  const unit = / \S+$/.exec(lo)?.[0];
  return unit !== undefined && hi.endsWith(unit) ? `${lo.slice(0, -unit.length)}–${hi}` : `${lo}–${hi}`;
}

/** The targets of the suites named (by the first part of their ids: `host`, `gpu-mlp`, `tfjs-gpu`), as the reference run recorded them. */
const targetsBlock: Block = (files, prefix, arg) => {
  if (arg === undefined) throw new Error('a targets block names its suites: <!-- pol-bench:start targets host,verbs -->');
  const suites = arg.split(',');
  const ref = files.filter(isReference);
  const lines: string[] = [];
  const from: ResultFile[] = [];
  for (const f of ref) {
    for (const g of targetGroups(f.results)) {
      if (!suites.includes(g.subject.id.split('.')[0] ?? '')) continue;
      if (!from.includes(f)) from.push(f);
      lines.push(`- ${g.subject.label} vs ${g.peerName}${g.where}: ${targetText(g.list[0]?.target)}.`);
    }
  }
  const first = from[0];
  if (first === undefined)
    return [
      `No target of this section is in the last run's results (${link(prefix, 'results.md')}); the next full run records them.`,
    ];
  const pages = from.map((f) => link(prefix, `${f.name}.md`)).join(', ');
  return [
    `Targets, as the run of ${first.results.environment.date.slice(0, 10)} held them (met or missed: ${pages}):`,
    '',
    ...lines,
  ];
};

/** The workers suite, a row per size: each way's time per batch, Pol against one thread and against the copying pool, and the copies' share. */
const workersBlock: Block = (files, prefix) => {
  const ref = files.filter(isReference);
  const sizes = ref
    .flatMap((f) => f.results.measurements)
    .filter((m) => /^workers\.pol\.\d+$/.test(m.id))
    .map((m) => m.id.split('.')[2] as string);
  if (sizes.length === 0) return [`The workers suite is not in the last run's results (${link(prefix, 'results.md')}).`];
  const holder = ref.find((f) => f.results.measurements.some((m) => m.id.startsWith('workers.'))) as ResultFile;
  const lines = [
    `Measured by the run of ${holder.results.environment.date.slice(0, 10)} (${link(prefix, `${holder.name}.md`)}):`,
    '',
    '| rows | one thread | pool, copies | pool, transfers | Pol | Pol vs one thread | Pol vs copies | copies’ share |',
    '| ---: | ---: | ---: | ---: | ---: | --- | --- | ---: |',
  ];
  for (const n of sizes) {
    const [one, copy, transfer, pol, copies] = ['one-thread', 'copy', 'transfer', 'pol', 'copies'].map((w) =>
      measurement(ref, `workers.${w}.${n}`),
    );
    const t = (x: Measurement | undefined) => (x === undefined ? '—' : formatNs(x.timeNs));
    const vs = (x: Measurement | undefined) =>
      pol === undefined || x === undefined ? '—' : speedText(pol.timeNs / x.timeNs, '').replace(/ than $/, '');
    const share = copies === undefined || copy === undefined ? '—' : `${((100 * copies.timeNs) / copy.timeNs).toFixed(1)}%`;
    lines.push(
      `| ${Number(n).toLocaleString('en-US')} | ${t(one)} | ${t(copy)} | ${t(transfer)} | ${t(pol)} | ${vs(one)} | ${vs(copy)} | ${share} |`,
    );
  }
  return lines;
};

/** A WebGPU step's rows, by suite: its ways, and what each cell adds (a second ratio against a floor of its own). */
const floorSteps = [
  { suite: 'gpu', eager: 'arena', extras: {} },
  {
    suite: 'gpu-mlp',
    eager: 'eager',
    extras: {
      eager: ['by-hand', 'prebuilt', 'by hand'],
      replay: ['replay-x4', 'prebuilt-x4', '4 steps per submit, against their floor'],
    },
  },
  {
    suite: 'gpu-uniform',
    eager: 'eager',
    extras: { replay: ['replay-batched', 'prebuilt-batched', 'the uniforms batched, against the batched floor'] },
  },
] as const;

/** The WebGPU steps as ratios to their floor (everything made once), with the GPU objects each makes per step: a table per adapter. */
const gpuFloorsBlock: Block = (files, prefix) => {
  const gpuFiles = files.filter((f) => f.name !== MAIN_FILE);
  if (gpuFiles.length === 0) return [`No WebGPU section is in the last run's results (${link(prefix, 'results.md')}).`];
  const lines: string[] = [];
  for (const f of gpuFiles) {
    const adapter = adapterOf(f.results);
    const of = (suite: string, way: string) => f.results.measurements.find((m) => m.id === `${suite}.${way}`);
    if (lines.length > 0) lines.push('');
    lines.push(
      `On ${adapter === undefined ? 'an unnamed adapter' : adapterLabel(adapter)}, measured by \`pnpm bench\` ${when(f.results)} (${link(prefix, `${f.name}.md`)}): ` +
        'time per step as a multiple of the floor’s, and the new GPU objects (buffers and bind groups) each way makes per step.',
      '',
      '| step | a buffer per array | a size-keyed pool | everything made once (floor) | Pol eager | Pol replayed |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const { suite, eager, extras } of floorSteps) {
      const floor = of(suite, 'prebuilt');
      if (floor === undefined) continue;
      const cell = (way: string, extra?: readonly [string, string, string]) => {
        const m = of(suite, way);
        if (m === undefined) return '—';
        const count =
          m.gpuObjects === undefined ? '' : Number.isInteger(m.gpuObjects) ? String(m.gpuObjects) : formatCount(m.gpuObjects);
        const objects = count === '' ? '' : `, ${count} objects`;
        const more = extra === undefined ? undefined : [of(suite, extra[0]), of(suite, extra[1])];
        const second = more?.[0] && more[1] ? `; ${extra?.[2]}: ${(more[0].timeNs / more[1].timeNs).toFixed(2)}×` : '';
        return `${(m.timeNs / floor.timeNs).toFixed(2)}×${objects}${second}`;
      };
      const x = extras as Partial<Record<'eager' | 'replay', readonly [string, string, string]>>;
      // By hand is against the floor too: its second figure is its own ratio.
      const eagerCell = x.eager === undefined ? cell(eager) : cell(eager, x.eager);
      const step = floor.section.replace(/^[^:]*: /, '').replace(/ \(.*$/, '');
      lines.push(
        `| ${step} | ${cell('buffer-per-step')} | ${cell('pool')} | ${cell('prebuilt')} | ${eagerCell} | ${cell('replay', x.replay)} |`,
      );
    }
  }
  if (!gpuFiles.some((f) => !isReference(f))) lines.push('', swiftShaderOnly);
  return lines;
};

const blocks: Readonly<Record<string, Block>> = {
  results: resultsBlock,
  why: whyBlock,
  targets: targetsBlock,
  workers: workersBlock,
  'gpu-floors': gpuFloorsBlock,
};

/** The names of the blocks a README may hold. */
export const blockNames = Object.keys(blocks);

function filesOf(results: Results | readonly ResultFile[]): readonly ResultFile[] {
  return 'environment' in results ? splitResults(results) : results;
}

/** The results block, markers included. */
export function readmeBlock(results: Results | readonly ResultFile[], prefix = 'benchmarks/'): string {
  return [README_START, ...resultsBlock(filesOf(results), prefix, undefined), README_END].join('\n');
}

/** A generated block of a text: where it starts and ends (line indices of its markers), its name and argument. */
export interface BlockAt {
  readonly name: string;
  readonly arg: string | undefined;
  readonly start: number;
  readonly end: number;
}

/** The generated blocks of a text; a start marker without its end, or an unknown block, is refused. */
export function blocksIn(text: string): BlockAt[] {
  const lines = text.split('\n');
  const out: BlockAt[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = START.exec((lines[i] ?? '').replace(/\r$/, ''));
    if (match === null) continue;
    const name = match[1] ?? 'results';
    if (!(name in blocks)) throw new Error(`line ${i + 1}: unknown block '${name}' (known: ${blockNames.join(', ')})`);
    let end = i + 1;
    while (end < lines.length && (lines[end] ?? '').replace(/\r$/, '') !== README_END) end++;
    if (end === lines.length) throw new Error(`line ${i + 1}: the block '${name}' has no ${README_END} line`);
    out.push({ name, arg: match[2], start: i, end });
    i = end;
  }
  return out;
}

/** The text with every generated block rewritten, or undefined when it has none. */
export function withReadmeBlocks(
  readme: string,
  results: Results | readonly ResultFile[],
  prefix = 'benchmarks/',
): string | undefined {
  const found = blocksIn(readme);
  if (found.length === 0) return undefined;
  const files = filesOf(results);
  const lines = readme.split('\n');
  // From the last block up, so that the earlier ones' line numbers hold.
  for (const b of [...found].reverse()) {
    const block = blocks[b.name] as Block;
    lines.splice(b.start + 1, b.end - b.start - 1, ...block(files, prefix, b.arg));
  }
  return lines.join('\n');
}

/** The same, under its older name. */
export const withReadmeBlock = withReadmeBlocks;

/** The text with what its generated blocks hold blanked (the lines kept, so that line numbers hold): what a reader wrote. */
export function outsideBlocks(text: string): string {
  const lines = text.split('\n');
  for (const b of blocksIn(text)) for (let i = b.start + 1; i < b.end; i++) lines[i] = '';
  return lines.join('\n');
}
