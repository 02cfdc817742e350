import { mergeConfig } from 'vitest/config';
import { polVitestConfig } from '../vitest.shared.ts';
import { prepareGpuEnvironment } from './src/gpu-environment.ts';

// The GPU benchmarks run on Dawn over SwiftShader, as @pol/webgpu's tests do.
prepareGpuEnvironment();

// Every benchmark runs once, in quick mode, in a forked process with the garbage collector exposed
// (bytes per operation are measured between explicit collections). Nothing about timing is asserted.
export default mergeConfig(polVitestConfig({ testTimeout: 180_000 }), {
  test: { pool: 'forks', execArgv: ['--expose-gc'] },
});
