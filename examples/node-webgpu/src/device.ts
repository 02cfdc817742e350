/**
 * A WebGPU device in Node.js, from Dawn's bindings (the `webgpu` package). Without a GPU, Dawn
 * runs on SwiftShader, a CPU Vulkan driver: on Debian or Ubuntu install `chromium` (which ships
 * it) and `libvulkan1`, and point `VK_ICD_FILENAMES` at
 * `/usr/lib/chromium/vk_swiftshader_icd.json` (done below when that file exists).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instrument } from '@pol/webgpu';

const swiftshader = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** Either a device, or why there is none. */
export type DeviceOrReason =
  | { readonly device: GPUDevice; readonly adapter: string; readonly release: () => void }
  | { readonly device: undefined; readonly reason: string };

// Dawn frees its instance when the object `create()` returned is garbage-collected, even with work
// in flight, and the process then crashes at its next event poll: keep it for the whole run.
let gpu: GPU | undefined;

/** Request an adapter and a device from Dawn; never throws for a missing adapter, says why instead. */
export async function requestDevice(): Promise<DeviceOrReason> {
  if (process.env.VK_ICD_FILENAMES === undefined && existsSync(swiftshader)) process.env.VK_ICD_FILENAMES = swiftshader;
  if (process.env.XDG_RUNTIME_DIR === undefined) {
    // Without one, the Vulkan loader prints "XDG_RUNTIME_DIR is invalid or not set" per device.
    const dir = join(tmpdir(), `pol-webgpu-runtime-${process.getuid?.() ?? 'user'}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    process.env.XDG_RUNTIME_DIR = dir;
  }
  let dawn: typeof import('webgpu');
  try {
    dawn = await import('webgpu');
  } catch (error) {
    return { device: undefined, reason: `Dawn's Node.js bindings (the webgpu package) did not load: ${String(error)}` };
  }
  gpu ??= dawn.create([]);
  const adapter = await gpu.requestAdapter();
  if (adapter === null) {
    return {
      device: undefined,
      reason:
        `no WebGPU adapter (VK_ICD_FILENAMES=${process.env.VK_ICD_FILENAMES ?? '(unset)'}); without a GPU, install ` +
        "Debian/Ubuntu's chromium and libvulkan1 packages for SwiftShader (sudo apt-get install -y chromium libvulkan1)",
    };
  }
  const info = adapter.info;
  // Handed to Pol before anything is compiled on it: checked mode then knows every layout and
  // pipeline the kernels make (what Pol has not seen created, it cannot check).
  const device = instrument(await adapter.requestDevice({ label: 'pol example' }));
  return {
    device,
    adapter: [info.vendor, info.description].filter((s) => s !== '').join(' ') || 'an unnamed adapter',
    release: () => device.destroy(),
  };
}
