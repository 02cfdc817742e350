/**
 * The same benchmarks on several Node.js lines, side by side (`npm run bench:lines -- --node 20,24`):
 * a column per line. Each line ran in a process of its own, one after the other, so the ratios
 * within a column hold as in any run, while differences between columns also carry the machine's
 * drift between the runs: read them as indicative, and repeat before believing a small one.
 */
import type { Results } from './model.js';
import { formatBytes, formatNs } from './op.js';
import { comparisonText, resultText, shortSection, targetText } from './report.js';

function cell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/** A markdown page: every measurement's time and bytes per line, then every comparison per line. */
export function linesPage(runs: readonly Results[]): string {
  const versions = runs.map((r) => `Node.js ${r.environment.node}`);
  const header = [`| what | ${versions.join(' | ')} |`, `| --- |${versions.map(() => ' ---: |').join('')}`];
  const first = runs[0];
  if (first === undefined) return '';
  const measured = [...header];
  for (const m of first.measurements) {
    const cells = runs.map((r) => {
      const same = r.measurements.find((x) => x.id === m.id);
      return same === undefined ? 'not run' : `${formatNs(same.timeNs)}, ${formatBytes(same.bytesPerOp)}`;
    });
    measured.push(`| ${cell(`${m.label} (${shortSection(m.section)})`)} | ${cells.join(' | ')} |`);
  }
  const compared = [`| comparison | target | ${versions.join(' | ')} |`, `| --- | --- |${versions.map(() => ' --- |').join('')}`];
  for (const c of first.comparisons) {
    const cells = runs.map((r) => {
      const same = r.comparisons.find((x) => x.subject === c.subject && x.peer === c.peer);
      const s = r.measurements.find((x) => x.id === c.subject);
      const p = r.measurements.find((x) => x.id === c.peer);
      if (same === undefined || s === undefined || p === undefined) return 'not run';
      const verdict = resultText(same);
      return verdict === '' ? comparisonText(same, s, p) : `${comparisonText(same, s, p)}: ${verdict}`;
    });
    const s = first.measurements.find((x) => x.id === c.subject);
    compared.push(
      `| ${cell(`${s?.label ?? c.subject} (${shortSection(s?.section ?? '')})`)} | ${targetText(c.target)} | ${cells.map(cell).join(' | ')} |`,
    );
  }
  return [
    '# Pol benchmarks on each Node.js line',
    '',
    ...runs.map(
      (r) =>
        `- Node.js ${r.environment.node} (V8 ${r.environment.v8}), ${r.environment.date}${r.environment.quick ? ', QUICK MODE (figures are meaningless)' : ''}`,
    ),
    '',
    'Each line ran in its own process, one after the other: compare ratios within a column; a difference between',
    'columns also carries the machine’s drift between the runs.',
    '',
    '## Time and bytes per operation',
    '',
    ...measured,
    '',
    '## Comparisons',
    '',
    ...compared,
  ].join('\n');
}
