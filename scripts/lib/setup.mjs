// Setting a fresh clone up: the pinned pnpm, the workspace's packages, and a WebGPU adapter for
// the tests and the demo (SwiftShader, from Debian's and Ubuntu's chromium package).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const pnpmVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.split('@')[1];
export const swiftshaderIcd = '/usr/lib/chromium/vk_swiftshader_icd.json';
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

export function log(message) {
  console.log(`\n[pol] ${message}`);
}

export function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/** `run`, without blocking the event loop (so that a timer can report progress meanwhile). */
export function runAsync(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: 'inherit', ...options });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

export function must(command, args, options) {
  const status = run(command, args, options);
  if (status !== 0) {
    console.error(`[pol] '${command} ${args.join(' ')}' failed with exit code ${status}.`);
    process.exit(status);
  }
}

/** The pinned pnpm, as a command and its leading arguments: the one on PATH if it is that version, else through npx. */
export function pnpm() {
  try {
    const found = execFileSync('pnpm', ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (found === pnpmVersion) return ['pnpm', []];
  } catch {
    // not installed
  }
  return ['npx', ['--yes', `pnpm@${pnpmVersion}`]];
}

export function withPnpm(args) {
  const [command, prefix] = pnpm();
  return [command, [...prefix, ...args]];
}

export function install() {
  log(`installing the workspace with pnpm ${pnpmVersion}`);
  must(...withPnpm(['install', '--frozen-lockfile']));
}

function hasVulkanLoader() {
  try {
    return execFileSync('ldconfig', ['-p'], { encoding: 'utf8' }).includes('libvulkan.so.1');
  } catch {
    return false;
  }
}

/** Whether a WebGPU adapter can be had without a GPU: SwiftShader and the Vulkan loader are installed. */
export function hasSwiftShader() {
  return existsSync(swiftshaderIcd) && hasVulkanLoader();
}

/** What to install, in words, for a machine without SwiftShader. */
export const swiftShaderAdvice =
  `SwiftShader (${swiftshaderIcd}) and the Vulkan loader: install Debian/Ubuntu's chromium and libvulkan1 ` +
  'packages (sudo apt-get install -y chromium libvulkan1)';

/**
 * WebGPU needs a Vulkan driver on a machine without a GPU: Debian's and Ubuntu's chromium package
 * ships SwiftShader. As root on Debian/Ubuntu, install it (and the Vulkan loader); otherwise say
 * exactly what to install. Returns whether it is there afterwards.
 */
export function ensureSwiftShader() {
  if (hasSwiftShader()) return true;
  if (!isRoot || !existsSync('/usr/bin/apt-get')) return false;
  log('installing chromium and libvulkan1 (SwiftShader, a CPU Vulkan driver, gives WebGPU a real adapter without a GPU)');
  must('apt-get', ['update']);
  must('apt-get', ['install', '-y', '--no-install-recommends', 'chromium', 'libvulkan1'], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return hasSwiftShader();
}

/** The environment for anything that opens a WebGPU device: the Vulkan loader pointed at SwiftShader when it is there. */
export function webgpuEnv(env = process.env) {
  const out = { ...env };
  if (existsSync(swiftshaderIcd) && out.VK_ICD_FILENAMES === undefined) out.VK_ICD_FILENAMES = swiftshaderIcd;
  return out;
}
