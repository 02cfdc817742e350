import { cpus, platform, release, totalmem } from 'node:os';
import type { Environment } from './model.js';

/** The machine and run: Node.js and V8 versions, CPU, cores, memory, date. */
export function environment(quick: boolean, gpu: string | undefined): Environment {
  const cpu = cpus();
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: `${platform()} ${release()} ${process.arch}`,
    cpu: cpu[0]?.model.trim() ?? 'unknown',
    cores: cpu.length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    date: new Date().toISOString(),
    quick,
    gpu,
    harness: 'mitata 1.0.34',
  };
}

/** One line about the machine, for the console and the report. */
export function describeEnvironment(env: Environment): string {
  return (
    `Node.js ${env.node} (V8 ${env.v8}) on ${env.platform}; ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB; ` +
    `${env.date}${env.quick ? '; QUICK MODE (figures are meaningless)' : ''}`
  );
}
