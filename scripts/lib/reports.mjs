// The vitest JSON reports (`.vitest-report.json`) that each workspace package's test task writes:
// where they are, a line per package as each one appears, and their totals.
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { root } from './setup.mjs';

/** The workspace packages that have tests: `{ name, dir, report }`. */
export function testedPackages() {
  const dirs = ['packages', 'examples', 'tools'].flatMap((d) => {
    const full = join(root, d);
    return existsSync(full) ? readdirSync(full).map((name) => join(full, name)) : [];
  });
  dirs.push(join(root, 'benchmarks'));
  return dirs
    .filter((dir) => existsSync(join(dir, 'package.json')))
    .map((dir) => ({ dir, manifest: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) }))
    .filter(({ manifest }) => manifest.scripts?.test !== undefined)
    .map(({ dir, manifest }) => ({ name: manifest.name, dir, report: join(dir, '.vitest-report.json') }));
}

export function removeReports(packages) {
  for (const p of packages) rmSync(p.report, { force: true });
}

/** A package's report, or undefined while it is absent or still being written. */
function readReport(p) {
  try {
    return JSON.parse(readFileSync(p.report, 'utf8'));
  } catch {
    return undefined;
  }
}

function countsOf(report) {
  // A test file that failed without a failing test (it did not load, or a hook threw) counts as one failure.
  const brokenFiles = (report.testResults ?? []).filter(
    (file) => file.status === 'failed' && !(file.assertionResults ?? []).some((test) => test.status === 'failed'),
  ).length;
  return {
    passed: report.numPassedTests ?? 0,
    failed: (report.numFailedTests ?? 0) + brokenFiles,
    skipped: (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0),
  };
}

function seconds(report) {
  const ends = (report.testResults ?? []).map((r) => r.endTime ?? 0);
  const end = Math.max(0, ...ends);
  return report.startTime === undefined || end === 0 ? undefined : (end - report.startTime) / 1000;
}

export function describeCounts({ passed, failed, skipped }) {
  return [`${passed} passed`, failed > 0 ? `${failed} failed` : '', skipped > 0 ? `${skipped} skipped` : '']
    .filter((s) => s !== '')
    .join(', ');
}

/**
 * Print a line per package as its report appears (vitest writes it when the package's tests are
 * done), while `task` runs; returns what `task` returned. The packages' names are padded to one
 * width, so the lines read as a table.
 */
export async function watchReports(packages, prefix, task) {
  const width = Math.max(...packages.map((p) => p.name.length));
  const seen = new Set();
  const poll = () => {
    for (const p of packages) {
      if (seen.has(p.name)) continue;
      const report = readReport(p);
      if (report === undefined) continue;
      seen.add(p.name);
      const counts = countsOf(report);
      const took = seconds(report);
      const mark = counts.failed > 0 || counts.passed === 0 ? '✗' : '✓';
      console.log(
        `${prefix}${mark} ${p.name.padEnd(width)}  ${describeCounts(counts)}${took === undefined ? '' : ` (${took.toFixed(1)} s)`}`,
      );
    }
  };
  const timer = setInterval(poll, 500);
  try {
    return await task();
  } finally {
    clearInterval(timer);
    poll();
  }
}

/**
 * The totals over the packages' reports: `{ passed, failed, skipped, missing }`, where `missing`
 * names the packages whose tests wrote no report (they did not run, or crashed before the end).
 */
export function totals(packages) {
  const sum = { passed: 0, failed: 0, skipped: 0, missing: [] };
  for (const p of packages) {
    const report = readReport(p);
    if (report === undefined) {
      sum.missing.push(`${p.name} (${relative(root, p.dir)})`);
      continue;
    }
    const counts = countsOf(report);
    sum.passed += counts.passed;
    sum.failed += counts.failed;
    sum.skipped += counts.skipped;
  }
  return sum;
}
