import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeConfig } from 'vitest/config';
import { polVitestConfig } from '../../vitest.shared.ts';

// The tests run on a real WebGPU: Dawn's Node.js bindings over SwiftShader, the CPU Vulkan driver
// that Debian's chromium package ships. Point the Vulkan loader at it unless told otherwise.
const swiftshader = '/usr/lib/chromium/vk_swiftshader_icd.json';
if (process.env.VK_ICD_FILENAMES === undefined && existsSync(swiftshader)) {
  process.env.VK_ICD_FILENAMES = swiftshader;
}
// Without a runtime directory, the Vulkan stack prints "error: XDG_RUNTIME_DIR is invalid or not
// set" on every device it opens; give it a private one so that the test output stays readable.
if (process.env.XDG_RUNTIME_DIR === undefined) {
  const dir = join(tmpdir(), `pol-webgpu-runtime-${process.getuid?.() ?? 'user'}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  process.env.XDG_RUNTIME_DIR = dir;
}

// Each test file requests its own device and destroys it in afterAll; forks (not worker threads)
// keep Dawn's native module in processes of their own. Forks inherit the variables set above.
export default mergeConfig(polVitestConfig({ testTimeout: 30_000 }), {
  test: { pool: 'forks' },
});
