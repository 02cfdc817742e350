/**
 * The report: a markdown page of tables, an SVG chart, and the raw figures as JSON. No browser and
 * no chart library: the SVG is written by hand.
 */
import { describeEnvironment } from './env.js';
import { adapterLabel } from './gpu-environment.js';
import type { Comparison, Measurement, Results, Target } from './model.js';
import { formatBytes, formatNs } from './op.js';
import { adapterOf, gpuSectionsOf, MAIN_FILE, type ResultFile } from './report-files.js';
import { lossCurveTable, timeSplitTable } from './report-steps.js';

const unitNames: Readonly<Record<Measurement['unit'], string>> = { alloc: 'alloc', call: 'call', step: 'step', batch: 'batch' };

function find(results: Results, id: string): Measurement {
  const m = results.measurements.find((x) => x.id === id);
  if (m === undefined) throw new Error(`no measurement ${id}`);
  return m;
}

/** How the subject compares with its peer, in the terms of the target. */
export function comparisonText(c: Comparison, subject: Measurement, peer: Measurement): string {
  const name = peer.label;
  switch (c.view) {
    case 'time-ratio':
      return `${c.ratio.toFixed(2)}× the time of ${name}`;
    case 'overhead':
      return `${c.overheadNs >= 0 ? '+' : '−'}${formatNs(Math.abs(c.overheadNs))} over ${name}`;
    case 'gcs': {
      const s = subject.gcs ?? Number.NaN;
      const p = peer.gcs ?? Number.NaN;
      const fewer = p === 0 ? 0 : 100 * (1 - s / p);
      return `${s} vs ${p} GCs per ${(subject.gcSteps ?? 0).toLocaleString('en-US')} ${unitNames[subject.unit]}s (${fewer.toFixed(0)}% fewer) than ${name}`;
    }
    case 'speed':
      return speedText(c.ratio, name);
  }
}

/** `2.07× faster than X`, or `1.20× slower than X`, from subject time ÷ peer time. */
export function speedText(ratio: number, name: string): string {
  const speed = 1 / ratio;
  return speed >= 1 ? `${speed.toFixed(speed < 10 ? 2 : 1)}× faster than ${name}` : `${ratio.toFixed(2)}× slower than ${name}`;
}

/** The target, for a reader. */
export function targetText(t: Target | undefined): string {
  if (t === undefined) return '—';
  const zero =
    ('zeroBytes' in t && t.zeroBytes === true ? ', 0 B' : '') +
    ('maxBytes' in t && t.maxBytes !== undefined ? `, ≤ ${t.maxBytes} B` : '');
  switch (t.kind) {
    case 'ratio-at-most': {
      const extra = t.noExtraBytes === true ? ', no byte beyond its peer’s' : '';
      const objects = t.zeroGpuObjects === true ? ', 0 new GPU objects' : '';
      return `≤ ${t.value}× the time${zero}${extra}${objects}`;
    }
    case 'faster-at-least':
      return `≥ ${t.value}× faster${zero}`;
    case 'overhead-at-most':
      return `≤ +${t.ns} ns${zero}`;
    case 'fewer-gcs-at-least':
      return t.fraction >= 1 ? 'no GCs at all' : `≥ ${Math.round(t.fraction * 100)}% fewer GCs`;
    case 'bytes-at-most':
      return t.bytes === 0 ? '0 B' : `≤ ${t.bytes} B`;
    case 'copied-at-most':
      return `${t.bytes === 0 ? '0 B' : `≤ ${t.bytes} B`} copied per task`;
  }
}

/** Whether the target holds the bytes per operation to something, so that summaries show them. */
function hasBytesTarget(t: Target | undefined): boolean {
  if (t === undefined) return false;
  if (t.kind === 'bytes-at-most') return true;
  return ('zeroBytes' in t && t.zeroBytes === true) || ('maxBytes' in t && t.maxBytes !== undefined);
}

/** `met`, `**missed**`, or nothing for a comparison without a target. */
export function resultText(c: Comparison): string {
  if (c.met === undefined) return '';
  return c.met ? 'met' : '**missed**';
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/**
 * The table of every comparison that has a target: what, time, bytes, ratio vs peer, target,
 * result; of one run, or of several files (each comparison read in its own file), the rows of the
 * sections measured on a WebGPU adapter naming it.
 */
export function targetsTable(results: Results | readonly ResultFile[]): string {
  const files = 'environment' in results ? [{ name: MAIN_FILE, results }] : results;
  const lines = ['| what | time / op | bytes / op | vs its peer | target | result |', '| --- | ---: | ---: | --- | --- | --- |'];
  for (const { results: r } of files) {
    const adapter = adapterOf(r);
    const gpu = gpuSectionsOf(r);
    for (const c of r.comparisons) {
      if (c.target === undefined) continue;
      const s = find(r, c.subject);
      const p = find(r, c.peer);
      const on = adapter !== undefined && gpu.includes(s.section) ? `, on ${adapterLabel(adapter)}` : '';
      const what = `${s.label} (${shortSection(s.section)}${on})`;
      lines.push(
        `| ${escapeCell(what)} | ${formatNs(s.timeNs)} | ${formatBytes(s.bytesPerOp)} | ${escapeCell(comparisonText(c, s, p))} | ${targetText(c.target)} | ${resultText(c)} |`,
      );
    }
  }
  return lines.join('\n');
}

/** `a of b targets met`, counted over one run or several files. */
export function targetsMet(results: Results | readonly ResultFile[]): { readonly met: number; readonly targeted: number } {
  const comparisons = 'environment' in results ? results.comparisons : results.flatMap((f) => f.results.comparisons);
  return {
    met: comparisons.filter((c) => c.met === true).length,
    targeted: comparisons.filter((c) => c.target !== undefined).length,
  };
}

/** A section's name, short: `n = 1,024`, `softmax`, `training`, `WebGPU, 8 dispatches`, `kissfft-wasm, n = 256`, `TensorFlow.js, host: the perceptron`. */
export function shortSection(section: string): string {
  if (section.startsWith('Host allocation')) return section.replace('Host allocation, ', '');
  if (section.startsWith('Verbs')) return 'softmax, n = 1,024';
  if (section.startsWith('Training')) return 'MLP training step';
  if (section.startsWith('WebGPU')) return `WebGPU, ${section.split(':')[1]?.split(',')[0]?.trim() ?? 'step'}`;
  if (section.startsWith('Workers')) return `workers, ${section.replace(/^.*, ([\d,]+ rows).*$/, '$1')}`;
  if (section.startsWith('WebAssembly')) return `kissfft-wasm, ${section.replace(/^.*, (n = [\d,]+).*$/, '$1')}`;
  // `TensorFlow.js, WebGPU: the perceptron`, `TensorFlow.js, host: 784 → 128 → 10`
  if (section.startsWith('TensorFlow.js')) return section.replace(/ \(.*$/, '');
  return section;
}

/** One table per section: every measurement, with its comparisons. */
export function sectionTables(results: Results): string {
  const out: string[] = [];
  for (const section of results.sections) {
    const rows = results.measurements.filter((m) => m.section === section);
    if (rows.length === 0) continue;
    const unit = unitNames[rows[0]?.unit ?? 'call'];
    const gcs = rows.some((m) => m.gcs !== undefined);
    const objects = rows.some((m) => m.gpuObjects !== undefined);
    const tasks = rows.some((m) => m.copiedPerTask !== undefined);
    const tensors = rows.some((m) => m.tensors !== undefined);
    out.push(`### ${section}`, '');
    out.push(
      `| what | time / ${unit} | bytes / ${unit} |${tasks ? ' bytes / task | copied / task |' : ''}${gcs ? ' GCs |' : ''}${objects ? ` new GPU objects / ${unit} |` : ''}${tensors ? ' tensors alive: after step 1, after the run |' : ''} vs peer | target | result |`,
      `| --- | ---: | ---: |${tasks ? ' ---: | ---: |' : ''}${gcs ? ' ---: |' : ''}${objects ? ' ---: |' : ''}${tensors ? ' ---: |' : ''} --- | --- | --- |`,
    );
    for (const m of rows) {
      const cs = results.comparisons.filter((c) => c.subject === m.id);
      const vs = cs.map((c) => comparisonText(c, m, find(results, c.peer))).join('<br>');
      const targets = cs.map((c) => targetText(c.target)).join('<br>');
      const met = cs.map((c) => resultText(c) || '—').join('<br>');
      const name = m.pol ? `**${m.label}**` : m.label;
      const gcCell = gcs ? ` ${m.gcs === undefined ? '' : `${m.gcs} / ${(m.gcSteps ?? 0).toLocaleString('en-US')}`} |` : '';
      const objectCell = objects ? ` ${m.gpuObjects === undefined ? '' : formatCount(m.gpuObjects)} |` : '';
      const taskCells = tasks
        ? ` ${m.tasksPerOp === undefined ? '' : formatBytes(m.bytesPerOp / m.tasksPerOp)} | ${m.copiedPerTask === undefined ? '' : formatBytes(m.copiedPerTask)} |`
        : '';
      const tensorCell = tensors
        ? ` ${m.tensors === undefined ? '' : `${m.tensors.afterFirstStep}, ${m.tensors.afterRun}`} |`
        : '';
      out.push(
        `| ${escapeCell(name)} | ${formatNs(m.timeNs)} | ${formatBytes(m.bytesPerOp)} |${taskCells}${gcCell}${objectCell}${tensorCell} ${escapeCell(vs)} | ${targets} | ${met} |`,
      );
    }
    out.push('', ...timeSplitTable(rows), ...lossCurveTable(rows));
  }
  return out.join('\n');
}

/** GPU objects per step: `0`, `0.01`, `24`. */
export function formatCount(n: number): string {
  return n === 0 || n >= 10 ? String(Math.round(n)) : n.toFixed(n < 0.1 ? 3 : 2);
}

/** An id without its size suffix: `host.arena-steady.1024` → `host.arena-steady`. */
function family(id: string): string {
  return id.replace(/\.\d+$/, '');
}

function sizeOf(id: string): string | undefined {
  const m = /\.(\d+)$/.exec(id);
  return m?.[1] === undefined ? undefined : Number(m[1]).toLocaleString('en-US');
}

function range(values: readonly number[], format: (v: number) => string): string {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return format(lo) === format(hi) ? format(lo) : `${format(lo)}–${format(hi)}`;
}

/** The comparisons of one target across sizes, its pair of rows, and where it applies. */
export interface TargetGroup {
  readonly list: readonly Comparison[];
  readonly subject: Measurement;
  readonly peer: Measurement;
  /** The peer's label, its size replaced by `n` for a group of several sizes. */
  readonly peerName: string;
  /** ` (n = 16, 1,024)`, ` (TensorFlow.js, host: …)` where the pair recurs in several sections, or empty. */
  readonly where: string;
}

/** The targets of a run, grouped across sizes (a family of ids, the same peer family, the same target). */
export function targetGroups(results: Results): TargetGroup[] {
  const groups = new Map<string, Comparison[]>();
  for (const c of results.comparisons) {
    if (c.target === undefined) continue;
    const key = `${family(c.subject)}|${family(c.peer)}|${targetText(c.target)}`;
    const list = groups.get(key) ?? [];
    list.push(c);
    groups.set(key, list);
  }
  // Pairs of the same labels in several sections (the tfjs sections' two models) are told apart by
  // their section.
  const sectionsOf = new Map<string, Set<string>>();
  for (const list of groups.values()) {
    const first = list[0] as Comparison;
    const pair = `${find(results, first.subject).label}|${find(results, first.peer).label}`;
    sectionsOf.set(pair, (sectionsOf.get(pair) ?? new Set()).add(find(results, first.subject).section));
  }
  return [...groups.values()].map((list) => {
    const first = list[0] as Comparison;
    const subject = find(results, first.subject);
    const peer = find(results, first.peer);
    const shared = (sectionsOf.get(`${subject.label}|${peer.label}`)?.size ?? 0) > 1;
    const sizes = list.map((c) => sizeOf(c.subject)).filter((x) => x !== undefined);
    const where = sizes.length > 0 ? ` (n = ${sizes.join(', ')})` : shared ? ` (${shortSection(subject.section)})` : '';
    return { list, subject, peer, peerName: list.length > 1 ? peer.label.replace(/\(\d+\)/, '(n)') : peer.label, where };
  });
}

/**
 * One line per target, across sizes: the measured range in the target's terms, and whether it
 * was met (at which sizes, where it differs).
 */
export function summaryLines(results: Results): string[] {
  const out: string[] = [];
  for (const { list, subject: s, peer: p, peerName, where } of targetGroups(results)) {
    const first = list[0] as Comparison;
    let figure: string;
    switch (first.view) {
      case 'time-ratio':
        figure = `${range(
          list.map((c) => c.ratio),
          (v) => v.toFixed(2),
        )}× the time`;
        break;
      case 'speed':
        figure = `${range(
          list.map((c) => 1 / c.ratio),
          (v) => v.toFixed(v < 10 ? 2 : 1),
        )}× faster`;
        break;
      case 'overhead':
        figure = `${range(
          list.map((c) => c.overheadNs),
          (v) => `+${formatNs(v)}`,
        )}`;
        break;
      case 'gcs':
        figure = comparisonText(first, s, p).replace(/ than .*$/, '');
        break;
    }
    const zero = hasBytesTarget(first.target)
      ? `, ${range(
          list.map((c) => find(results, c.subject).bytesPerOp),
          (v) => formatBytes(v),
        )} per ${unitNames[s.unit]}`
      : '';
    const t = first.target;
    const extra =
      t?.kind === 'ratio-at-most' && t.noExtraBytes === true
        ? `, ${range(
            list.map((c) => find(results, c.subject).bytesPerOp - find(results, c.peer).bytesPerOp),
            (v) => `${v < 0 ? '−' : '+'}${formatBytes(Math.abs(v))}`,
          )} per ${unitNames[s.unit]} over its peer`
        : '';
    const objects =
      t?.kind === 'ratio-at-most' && t.zeroGpuObjects === true
        ? `, ${range(
            list.map((c) => find(results, c.subject).gpuObjects ?? Number.NaN),
            formatCount,
          )} new GPU objects per ${unitNames[s.unit]}`
        : '';
    const copied =
      t?.kind === 'copied-at-most'
        ? `, ${range(
            list.map((c) => find(results, c.subject).copiedPerTask ?? Number.NaN),
            (v) => formatBytes(v),
          )} copied per task`
        : '';
    const met = list.filter((c) => c.met === true);
    let verdict: string;
    if (met.length === list.length) verdict = 'met';
    else if (met.length === 0) verdict = '**missed**';
    else verdict = `met at n = ${met.map((c) => sizeOf(c.subject)).join(', ')}; **missed** at the other sizes`;
    out.push(
      `${s.label} vs ${peerName}${where}: ${figure}${zero}${extra}${objects}${copied}; target ${targetText(first.target)}: ${verdict}.`,
    );
  }
  return out;
}

/** What a page says besides its run: its title, its chart, and the pages of the same folder. */
export interface PageOptions {
  readonly title?: string;
  /** The chart's file, beside the page (default `chart.svg`). */
  readonly chart?: string;
  /** The other pages of the folder, by file name, with what each holds. */
  readonly others?: readonly { readonly file: string; readonly what: string }[];
}

/** The whole markdown page of one run (or one results file). */
export function markdown(results: Results, page: PageOptions = {}): string {
  const env = results.environment;
  const { met, targeted } = targetsMet(results);
  const adapter = adapterOf(results);
  const gpu =
    gpuSectionsOf(results).length > 0 && adapter !== undefined
      ? `WebGPU on ${env.gpu ?? adapterLabel(adapter)}`
      : 'no GPU section';
  const others = page.others ?? [];
  return [
    `# ${page.title ?? 'Pol benchmarks: results'}`,
    '',
    `${describeEnvironment(env)}. Harness: ${env.harness}. ${gpu}. The run took ${Math.round(results.seconds)} s.`,
    '',
    'Generated by `pnpm bench` (see [the README](../README.md) for what is measured and how). Time per operation is the',
    'median, over interleaved rounds, of each round’s mean (garbage collection included); bytes are JavaScript heap plus',
    'ArrayBuffer bytes allocated per operation. Pol rows are in bold.',
    ...(others.length === 0
      ? []
      : ['', `The same folder: ${others.map((o) => `[${o.file}](${o.file}) (${o.what})`).join(', ')}.`]),
    '',
    `## Targets: ${met} of ${targeted} met`,
    '',
    ...summaryLines(results).map((line) => `- ${line}`),
    '',
    targetsTable(results),
    '',
    `![Time per operation, log scale](${page.chart ?? 'chart.svg'})`,
    '',
    '## Every measurement',
    '',
    sectionTables(results),
  ].join('\n');
}

// --- the chart -------------------------------------------------------------------------------

function xml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * A horizontal bar chart of time per operation, log scale, one panel per section, Pol's bars in
 * colour and the peers' in grey.
 */
export function chart(results: Results): string {
  const width = 1000;
  const labelWidth = 430;
  const plotLeft = labelWidth + 10;
  const plotWidth = 440;
  const row = 20;
  const title = 28;
  const top = 56;
  // 1 ns … 1 ms, or further when a row takes longer (a 65,536-point transform).
  const slowest = Math.max(1e6, ...results.measurements.map((m) => (Number.isFinite(m.timeNs) ? m.timeNs : 0)));
  const allLabels = ['1 ns', '10 ns', '100 ns', '1 µs', '10 µs', '100 µs', '1 ms', '10 ms', '100 ms', '1 s'];
  const decades = allLabels.slice(0, Math.min(allLabels.length, Math.ceil(Math.log10(slowest)) + 1)).map((_, i) => 10 ** i);
  const lo = Math.log10(decades[0] ?? 1);
  const hi = Math.log10(decades[decades.length - 1] ?? 1e6);
  const x = (ns: number): number => plotLeft + ((Math.log10(Math.max(ns, 1)) - lo) / (hi - lo)) * plotWidth;
  const parts: string[] = [];
  let y = top;
  for (const section of results.sections) {
    const rows = results.measurements.filter((m) => m.section === section);
    if (rows.length === 0) continue;
    const unit = unitNames[rows[0]?.unit ?? 'call'];
    parts.push(`<text x="8" y="${y + 18}" class="section">${xml(section)} (time per ${unit})</text>`);
    y += title;
    const gridTop = y;
    const gridBottom = y + rows.length * row;
    for (const d of decades) {
      parts.push(`<line x1="${x(d).toFixed(1)}" y1="${gridTop}" x2="${x(d).toFixed(1)}" y2="${gridBottom}" class="grid"/>`);
    }
    for (const m of rows) {
      const w = Math.max(1, x(m.timeNs) - plotLeft);
      parts.push(
        `<text x="${labelWidth}" y="${y + 14}" class="label" text-anchor="end">${xml(m.label)}</text>`,
        `<rect x="${plotLeft}" y="${y + 3}" width="${w.toFixed(1)}" height="${row - 6}" class="${m.pol ? 'pol' : 'peer'}"/>`,
        `<text x="${(plotLeft + w + 6).toFixed(1)}" y="${y + 14}" class="value">${xml(formatNs(m.timeNs))}</text>`,
      );
      y += row;
    }
    y += 8;
  }
  const axisY = y + 4;
  const tickLabels = allLabels;
  decades.forEach((d, i) => {
    parts.push(`<text x="${x(d).toFixed(1)}" y="${axisY + 12}" class="axis" text-anchor="middle">${tickLabels[i] ?? ''}</text>`);
  });
  const height = axisY + 40;
  const env = results.environment;
  const subtitle = `${env.node}, ${env.cpu}, ${env.date.slice(0, 10)}${env.quick ? ' (QUICK MODE: meaningless figures)' : ''}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', sans-serif">`,
    '<style>',
    '  .title { font-size: 16px; font-weight: 600; fill: #1f2328; }',
    '  .subtitle { font-size: 12px; fill: #59636e; }',
    '  .section { font-size: 13px; font-weight: 600; fill: #1f2328; }',
    '  .label { font-size: 11.5px; fill: #1f2328; }',
    '  .value { font-size: 11px; fill: #59636e; }',
    '  .axis { font-size: 11px; fill: #59636e; }',
    '  .pol { fill: #1f77b4; }',
    '  .peer { fill: #b0b7bf; }',
    '  .grid { stroke: #d0d7de; stroke-width: 0.5; }',
    '</style>',
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="8" y="22" class="title">Pol beside its peers: time per operation (log scale; shorter is faster)</text>`,
    `<text x="8" y="40" class="subtitle">${xml(subtitle)}. Blue: Pol. Grey: peers and baselines.</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/** The raw figures. */
export function json(results: Results): string {
  return `${JSON.stringify(results, null, 2)}\n`;
}
