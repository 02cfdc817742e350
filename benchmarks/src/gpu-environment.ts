/**
 * Which WebGPU adapter the GPU sections run on, and the process environment Dawn needs for it, set
 * once before the first adapter:
 *
 * - `swiftshader`: the Vulkan loader pointed at Debian's SwiftShader (a CPU implementation of
 *   Vulkan, inside the `chromium` package), so that the sections run on any machine;
 * - `system`: the Vulkan drivers the loader finds (or `VK_ICD_FILENAMES`, if set): a real GPU;
 * - `auto` (the benchmarks' default): `system` when a child process finds a hardware adapter there,
 *   else `swiftshader`.
 *
 * Without a choice (the tests, from their vitest config), it is SwiftShader unless
 * `VK_ICD_FILENAMES` is already set. Either way a runtime directory is provided for the Vulkan
 * stack, so that it does not complain on every device it opens. What the adapter turned out to be
 * is recorded with the results (`AdapterInfo`), and names the results file of the GPU sections.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AdapterChoice, AdapterInfo } from './model.js';

/** Where Debian's and Ubuntu's `chromium` package puts SwiftShader's Vulkan driver. */
export const swiftshaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** What `--adapter` takes. */
export const adapterChoices = ['auto', 'swiftshader', 'system'] as const;

let chosen: AdapterChoice | undefined;

/**
 * Fix the adapter for this process (before the first Dawn instance exists; a later call cannot
 * change what Vulkan has loaded): `auto` becomes `system` or `swiftshader` here. Returns the choice.
 */
export function chooseAdapter(choice: AdapterChoice | 'auto'): AdapterChoice {
  choice = resolveAdapter(choice);
  if (choice === 'swiftshader') {
    if (!existsSync(swiftshaderIcd))
      throw new Error(
        `--adapter swiftshader: no SwiftShader at ${swiftshaderIcd}; install Debian's chromium and libvulkan1 packages (apt-get install -y chromium libvulkan1)`,
      );
    process.env.VK_ICD_FILENAMES = swiftshaderIcd;
  }
  chosen = choice;
  prepareGpuEnvironment();
  return choice;
}

/** What `auto` means here: `system` when the system's adapter is a GPU (`probe`), else `swiftshader`; any other choice as it is. */
export function resolveAdapter(
  choice: AdapterChoice | 'auto',
  probe: () => AdapterInfo | undefined = probeSystemAdapter,
): AdapterChoice {
  if (choice !== 'auto') return choice;
  return probe()?.fallback === false ? 'system' : 'swiftshader';
}

/** The choice `chooseAdapter` fixed, if any. */
export function adapterChoice(): AdapterChoice | undefined {
  return chosen;
}

/** Point Vulkan at SwiftShader when nothing else is chosen or set up, and give it a runtime directory. */
export function prepareGpuEnvironment(): void {
  if (chosen === undefined && process.env.VK_ICD_FILENAMES === undefined && existsSync(swiftshaderIcd))
    process.env.VK_ICD_FILENAMES = swiftshaderIcd;
  if (process.env.XDG_RUNTIME_DIR === undefined) {
    const dir = join(tmpdir(), `pol-webgpu-runtime-${process.getuid?.() ?? 'user'}`);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    process.env.XDG_RUNTIME_DIR = dir;
  }
}

/** What an adapter says of itself (Dawn's `GPUAdapterInfo`), and the choice that found it. */
export function adapterInfo(adapter: GPUAdapter, choice: AdapterChoice | undefined = chosen): AdapterInfo {
  const info = (adapter as { info?: GPUAdapterInfo & { isFallbackAdapter?: boolean } }).info;
  const description = info?.description ?? '';
  return {
    vendor: info?.vendor ?? '',
    architecture: info?.architecture ?? '',
    device: info?.device ?? '',
    description,
    fallback: info?.isFallbackAdapter ?? isSoftware(info?.architecture ?? '', description),
    choice,
  };
}

/** The adapter, short, for a reader: `SwiftShader`, `nvidia hopper (NVIDIA H200)`. */
export function adapterLabel(info: AdapterInfo): string {
  if (/swiftshader/i.test(`${info.architecture} ${info.description}`)) return 'SwiftShader';
  const name = [info.vendor, info.architecture].filter((p) => p !== '').join(' ');
  const detail = info.description || info.device;
  if (name === '') return detail || 'an unnamed adapter';
  return detail === '' ? name : `${name} (${detail})`;
}

/** A CPU implementation, by name, where the adapter does not say (SwiftShader, llvmpipe/lavapipe). */
function isSoftware(architecture: string, description: string): boolean {
  return /swiftshader|llvmpipe|lavapipe|softpipe/i.test(`${architecture} ${description}`);
}

/** Refuse a `system` choice that found no hardware adapter: its figures would not be a GPU's. */
export function checkAdapter(info: AdapterInfo): void {
  if (info.choice === 'system' && info.fallback)
    throw new Error(
      `--adapter system found no GPU, only ${[info.vendor, info.architecture, info.description].filter((p) => p !== '').join(', ')} ` +
        '(a CPU implementation); run with --adapter swiftshader, or on a machine with a GPU and its Vulkan driver',
    );
}

/**
 * The adapter the system's Vulkan drivers give, asked in a child process (Vulkan reads its
 * drivers once per process, so this one must not load them before the choice): undefined when
 * there is none, or when the child fails or takes more than 30 seconds.
 */
export function probeSystemAdapter(): AdapterInfo | undefined {
  const webgpu = pathToFileURL(createRequire(import.meta.url).resolve('webgpu')).href;
  const script =
    `const { create } = await import(${JSON.stringify(webgpu)});` +
    'const a = await create([]).requestAdapter();' +
    'const i = a?.info;' +
    "console.log(JSON.stringify(i && { vendor: i.vendor, architecture: i.architecture, device: i.device, description: i.description, fallback: i.isFallbackAdapter ?? false }) ?? 'null');" +
    'process.exit(0);';
  const env = { ...process.env };
  if (env.VK_ICD_FILENAMES === swiftshaderIcd) delete env.VK_ICD_FILENAMES;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8', timeout: 30_000 });
  const line = child.stdout?.trim().split('\n').at(-1);
  if (child.status !== 0 || line === undefined) return undefined;
  try {
    const found = JSON.parse(line) as Omit<AdapterInfo, 'choice'> | null;
    if (found === null) return undefined;
    return { ...found, fallback: found.fallback || isSoftware(found.architecture, found.description), choice: 'system' };
  } catch {
    return undefined;
  }
}
