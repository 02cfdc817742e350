/**
 * Where a run's figures go: the sections measured on the WebGPU adapter into a results file named
 * by that adapter (`gpu-google-swiftshader.json`, `gpu-nvidia-hopper.json`), everything else into
 * `results.json`, each with its page (`.md`). So a run on a real GPU writes a file of its own
 * beside SwiftShader's, and no figure of one adapter is ever read as another's.
 *
 * A folder of results is read back as a list of files: the main one first, then the adapters'
 * (CPU implementations first). A `results.json` from before the split, which holds its GPU
 * sections itself, is split the same way when read, unless the adapter's own file is newer.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdapterInfo, Results } from './model.js';

/** One results file: `results` (no GPU section) or `gpu-<vendor>-<architecture>`, and what it holds. */
export interface ResultFile {
  readonly name: string;
  readonly results: Results;
  /** The JSON file its figures are read from: `<name>.json`, or `results.json` for a run from before the split. */
  readonly source: string;
}

/** The main file's name. */
export const MAIN_FILE = 'results';

function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/** The results file of an adapter's sections: `gpu-<vendor>-<architecture>` (the device or description where no architecture). */
export function adapterFileName(info: AdapterInfo): string {
  const vendor = slug(info.vendor) || 'unknown';
  const kind = slug(info.architecture) || slug(info.device) || slug(info.description) || 'adapter';
  return `gpu-${vendor}-${kind}`;
}

/**
 * The adapter of a run's GPU sections: recorded, or, for a run from before it was, read off its
 * `gpu` line (`Dawn: google, swiftshader, SwiftShader driver 5.0.0`).
 */
export function adapterOf(results: Results): AdapterInfo | undefined {
  const env = results.environment;
  if (env.adapter !== undefined) return env.adapter;
  if (env.gpu === undefined) return undefined;
  const [vendor = '', architecture = '', ...rest] = env.gpu.replace(/^Dawn: /, '').split(', ');
  const description = rest.join(', ');
  return { vendor, architecture, device: '', description, fallback: /swiftshader|llvmpipe|lavapipe/i.test(env.gpu) };
}

/** The sections of a run measured on its adapter: recorded, or for older runs, the sections on WebGPU. */
export function gpuSectionsOf(results: Results): readonly string[] {
  return results.gpuSections ?? results.sections.filter((s) => /WebGPU/.test(s));
}

/** The part of a run that holds these sections only (its measurements and the comparisons of its subjects). */
function part(results: Results, sections: readonly string[], gpu: boolean): Results {
  const measurements = results.measurements.filter((m) => sections.includes(m.section));
  const ids = new Set(measurements.map((m) => m.id));
  const env = results.environment;
  return {
    environment: gpu ? env : { ...env, gpu: undefined, adapter: undefined },
    measurements,
    comparisons: results.comparisons.filter((c) => ids.has(c.subject)),
    sections: results.sections.filter((s) => sections.includes(s)),
    ...(gpu ? { gpuSections: sections } : { gpuSections: [] }),
    seconds: results.seconds,
  };
}

/** A run, split into the files it writes: `results` for the sections off the GPU, the adapter's file for the others (each only if it has any). */
export function splitResults(results: Results, source?: string): ResultFile[] {
  const gpu = gpuSectionsOf(results).filter((s) => results.sections.includes(s));
  const host = results.sections.filter((s) => !gpu.includes(s));
  const files: ResultFile[] = [];
  if (host.length > 0)
    files.push({ name: MAIN_FILE, results: part(results, host, false), source: source ?? `${MAIN_FILE}.json` });
  const adapter = adapterOf(results);
  if (gpu.length > 0) {
    const name = adapter === undefined ? 'gpu-unknown-adapter' : adapterFileName(adapter);
    files.push({ name, results: part(results, gpu, true), source: source ?? `${name}.json` });
  }
  return files;
}

/** Whether a file holds a CPU implementation's GPU sections (SwiftShader's), or no GPU section at all. */
export function isReference(file: ResultFile): boolean {
  return file.name === MAIN_FILE || adapterOf(file.results)?.fallback === true;
}

/**
 * Order files for reading: the main file, then the adapters that are CPU implementations, then the
 * real GPUs, each group by name; of two files of the same name, the later run (at the same time,
 * the file of that name rather than a part of an older `results.json`).
 */
export function orderFiles(files: readonly ResultFile[]): ResultFile[] {
  const byName = new Map<string, ResultFile>();
  const date = (f: ResultFile) => Date.parse(f.results.environment.date);
  const own = (f: ResultFile) => f.source === `${f.name}.json`;
  for (const f of files) {
    const had = byName.get(f.name);
    if (had === undefined || date(f) > date(had) || (date(f) === date(had) && own(f))) byName.set(f.name, f);
  }
  const rank = (f: ResultFile) => (f.name === MAIN_FILE ? 0 : isReference(f) ? 1 : 2);
  return [...byName.values()].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

/** Every results file of a folder: `results.json` and each `gpu-*.json`, split and ordered. */
export function readResultFiles(dir: string): ResultFile[] {
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir).filter((f) => f === `${MAIN_FILE}.json` || /^gpu-[a-z0-9-]+\.json$/.test(f));
  const files: ResultFile[] = [];
  for (const f of names) {
    const results = JSON.parse(readFileSync(join(dir, f), 'utf8')) as Results;
    // A file holds what its name says: results.json its sections off the GPU (and, from before the
    // split, its GPU sections too, under their adapter's name).
    files.push(...splitResults(results, f));
  }
  return orderFiles(files);
}

/** Several files as one run, for what shows them together (the chart): their sections in order. */
export function mergeResults(files: readonly ResultFile[]): Results | undefined {
  const first = files[0];
  if (first === undefined) return undefined;
  return {
    environment: first.results.environment,
    measurements: files.flatMap((f) => f.results.measurements),
    comparisons: files.flatMap((f) => f.results.comparisons),
    sections: files.flatMap((f) => f.results.sections),
    gpuSections: files.flatMap((f) => gpuSectionsOf(f.results)),
    seconds: files.reduce((s, f) => s + f.results.seconds, 0),
  };
}
