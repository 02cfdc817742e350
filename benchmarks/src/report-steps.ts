/**
 * The report's tables for sections of whole training steps measured beside TensorFlow.js (the
 * tfjs sections), after each section's table of measurements:
 *
 * - where the time goes: per way of running the step, its kernels and dispatches, its JavaScript
 *   side (the time to its last submit) and that per kernel, its time end to end, and what the end
 *   to end time adds to the JavaScript side (the GPU running the kernels, and the wait for the
 *   read-back); on the host a step's call is its whole time;
 * - the loss curves side by side, at a few steps, and the largest difference of each Pol curve
 *   from TensorFlow.js's.
 */
import type { Measurement } from './model.js';
import { formatNs } from './op.js';

interface Way {
  readonly name: string;
  readonly kernels: number | undefined;
  readonly dispatches: number | undefined;
  readonly submit: Measurement | undefined;
  readonly endToEnd: Measurement | undefined;
}

function ways(rows: readonly Measurement[]): Way[] {
  const names = [...new Set(rows.flatMap((m) => (m.way === undefined ? [] : [m.way.name])))];
  return names.map((name) => {
    const of = rows.filter((m) => m.way?.name === name);
    return {
      name,
      kernels: of.find((m) => m.kernelsPerStep !== undefined)?.kernelsPerStep,
      dispatches: of.find((m) => m.dispatchesPerStep !== undefined)?.dispatchesPerStep,
      submit: of.find((m) => m.way?.time === 'submit'),
      endToEnd: of.find((m) => m.way?.time === 'end to end'),
    };
  });
}

function count(n: number | undefined): string {
  return n === undefined ? '—' : String(n);
}

function time(m: Measurement | undefined): string {
  return m === undefined ? '—' : formatNs(m.timeNs);
}

/** Where a step's time goes, per way of running it: empty for a section without `way`s. */
export function timeSplitTable(rows: readonly Measurement[]): string[] {
  const all = ways(rows);
  if (all.length === 0) return [];
  const gpu = all.some((w) => w.submit !== undefined);
  const lines = gpu
    ? [
        '| where the time goes | kernels / step | dispatches / step | JavaScript side / step | per kernel | end to end / step | end to end − JavaScript side |',
        '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ]
    : ['| where the time goes | kernels / step | time / step | per kernel |', '| --- | ---: | ---: | ---: |'];
  for (const w of all) {
    const js = gpu ? w.submit : w.endToEnd;
    const perKernel = js === undefined || w.kernels === undefined ? '—' : formatNs(js.timeNs / w.kernels);
    if (!gpu) {
      lines.push(`| ${w.name} | ${count(w.kernels)} | ${time(js)} | ${perKernel} |`);
      continue;
    }
    const gap = js === undefined || w.endToEnd === undefined ? '—' : formatNs(w.endToEnd.timeNs - js.timeNs);
    lines.push(
      `| ${w.name} | ${count(w.kernels)} | ${count(w.dispatches)} | ${time(js)} | ${perKernel} | ${time(w.endToEnd)} | ${gap} |`,
    );
  }
  return [...lines, ''];
}

/** The steps a curve is shown at: 1, 2, 5, 10, 20, 50, …, and the last. */
function shownSteps(length: number): number[] {
  const steps: number[] = [];
  for (let decade = 1; decade <= length; decade *= 10) {
    for (const k of [1, 2, 5]) if (k * decade <= length) steps.push(k * decade);
  }
  if (steps.at(-1) !== length) steps.push(length);
  return steps;
}

/** The largest absolute difference of two curves over their common steps. */
export function curveGap(a: readonly number[], b: readonly number[]): number {
  let gap = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++)
    gap = Math.max(gap, Math.abs((a[i] ?? Number.NaN) - (b[i] ?? Number.NaN)));
  return gap;
}

/** The loss curves of a section side by side: empty for a section without curves. */
export function lossCurveTable(rows: readonly Measurement[]): string[] {
  const curves = rows.filter((m) => m.losses !== undefined && m.losses.length > 0);
  if (curves.length === 0) return [];
  const name = (m: Measurement) => m.way?.name ?? m.label;
  const length = Math.min(...curves.map((m) => m.losses?.length ?? 0));
  const lines = [`| loss at step | ${curves.map(name).join(' | ')} |`, `| ---: |${' ---: |'.repeat(curves.length)}`];
  for (const step of shownSteps(length)) {
    lines.push(`| ${step} | ${curves.map((m) => (m.losses?.[step - 1] ?? Number.NaN).toFixed(6)).join(' | ')} |`);
  }
  const peer = curves.find((m) => !m.pol);
  if (peer !== undefined) {
    const gaps = curves
      .filter((m) => m.pol)
      .map((m) => `${name(m)} ${curveGap(m.losses ?? [], peer.losses ?? []).toExponential(1)}`);
    lines.push('', `Largest difference from ${name(peer)}’s curve over ${length} steps: ${gaps.join(', ')}.`);
  }
  return [...lines, ''];
}
