/**
 * The process environment Dawn needs on a machine without a GPU, set once before the first
 * adapter: the Vulkan loader pointed at Debian's SwiftShader (unless VK_ICD_FILENAMES is already
 * set), and a runtime directory for the Vulkan stack, so that it does not complain on every device
 * it opens. The benchmarks and their tests both call it (the tests from their vitest config).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const swiftshader = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** Point Vulkan at SwiftShader when nothing else is set up, and give it a runtime directory. */
export function prepareGpuEnvironment(): void {
  if (process.env.VK_ICD_FILENAMES === undefined && existsSync(swiftshader)) process.env.VK_ICD_FILENAMES = swiftshader;
  if (process.env.XDG_RUNTIME_DIR === undefined) {
    const dir = join(tmpdir(), `pol-webgpu-runtime-${process.getuid?.() ?? 'user'}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    process.env.XDG_RUNTIME_DIR = dir;
  }
}
