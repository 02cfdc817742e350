import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeConfig } from 'vitest/config';
import { polVitestConfig } from '../vitest.shared.ts';

// The GPU benchmarks run on Dawn over SwiftShader, as @pol/webgpu's tests do: point the Vulkan
// loader at Debian's SwiftShader unless told otherwise, and give the Vulkan stack a runtime
// directory so that it does not complain on every device it opens.
const swiftshader = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (process.env.VK_ICD_FILENAMES === undefined && existsSync(swiftshader)) process.env.VK_ICD_FILENAMES = swiftshader;
if (process.env.XDG_RUNTIME_DIR === undefined) {
  const dir = join(tmpdir(), `pol-webgpu-runtime-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  process.env.XDG_RUNTIME_DIR = dir;
}

// Every benchmark runs once, in quick mode, in a forked process with the garbage collector exposed
// (bytes per operation are measured between explicit collections). Nothing about timing is asserted.
export default mergeConfig(polVitestConfig({ testTimeout: 180_000 }), {
  test: { pool: 'forks', execArgv: ['--expose-gc'] },
});
