import { bytesPerOp, median, timeOp } from './measure.js';
import type { Measurement, RunOptions } from './model.js';

/** A micro-operation to measure: timed with mitata, then its bytes per call. */
export interface OpSpec {
  readonly id: string;
  readonly section: string;
  readonly label: string;
  readonly pol: boolean;
  readonly unit: Measurement['unit'];
  readonly op: () => unknown;
  /** Calls in the first bytes batch (later ones are sized to a 1 MiB budget). */
  readonly bytesOps: number;
  /** Most calls in a bytes batch (default 100,000). */
  readonly maxBytesOps?: number;
  /** Fewest calls in a bytes batch (default 8): fewer for an operation that allocates megabytes, so that a batch fits between collections. */
  readonly minBytesOps?: number;
  /** mitata's minimum CPU time per round, in ms (default 250). */
  readonly minCpuMs?: number;
}

/**
 * Measure a group of operations meant to be compared: time them in interleaved rounds (each round
 * times every op once, for `minCpuMs`; in a rotated order with `rotate`), so that a drift of the
 * machine's speed affects them all alike, and keep each op's median over the rounds; then measure
 * each op's bytes per call.
 */
export async function measureOps(specs: readonly OpSpec[], run: RunOptions, rounds = 3, rotate = false): Promise<Measurement[]> {
  const n = run.quick ? 1 : rounds;
  const means: number[][] = specs.map(() => []);
  const p50s: number[][] = specs.map(() => []);
  const ticks: number[] = specs.map(() => 0);
  for (let r = 0; r < n; r++) {
    for (let j = 0; j < specs.length; j++) {
      // With `rotate`, round r starts at the r-th op, so that no op always follows the same one (an op
      // that allocates leaves the collector work that slows whatever runs next).
      const i = rotate ? (j + r) % specs.length : j;
      const spec = specs[i] as OpSpec;
      const timing = await timeOp(spec.op, run.quick, spec.minCpuMs ?? 250);
      means[i]?.push(timing.mean);
      p50s[i]?.push(timing.p50);
      ticks[i] = (ticks[i] ?? 0) + timing.ops;
    }
  }
  const out: Measurement[] = [];
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i] as OpSpec;
    const bytes = await bytesPerOp(spec.op, {
      ops: run.quick ? Math.min(spec.bytesOps, 64) : spec.bytesOps,
      maxOps: run.quick ? 256 : (spec.maxBytesOps ?? 100_000),
      ...(spec.minBytesOps === undefined ? {} : { minOps: spec.minBytesOps }),
      repeats: run.quick ? 1 : 3,
    });
    const m: Measurement = {
      id: spec.id,
      section: spec.section,
      label: spec.label,
      pol: spec.pol,
      unit: spec.unit,
      timeNs: median(means[i] ?? []),
      p50Ns: median(p50s[i] ?? []),
      bytesPerOp: bytes,
      ops: ticks[i] ?? 0,
    };
    run.log(`  ${spec.label.padEnd(56)} ${formatNs(m.timeNs).padStart(10)}  ${formatBytes(m.bytesPerOp).padStart(10)}`);
    out.push(m);
  }
  return out;
}

/** A duration for a reader: `12.3 ns`, `4.56 µs`, `1.23 ms`. */
export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return String(ns);
  if (ns < 1_000) return `${ns < 10 ? ns.toFixed(2) : ns < 100 ? ns.toFixed(1) : ns.toFixed(0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(ns < 10_000 ? 2 : 1)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

/** A size for a reader: `0 B`, `96 B`, `4.2 KiB`, `1.1 MiB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  if (bytes < 0.005) return '0 B';
  if (bytes < 1) return `${bytes.toFixed(2)} B`;
  if (bytes < 1024) return `${Math.round(bytes)} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
