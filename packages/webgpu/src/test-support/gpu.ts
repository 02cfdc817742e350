/**
 * Test support: a real WebGPU device (Dawn's Node.js bindings; SwiftShader on CI), and wrappers
 * that count or fail device calls. Not part of the package.
 */
import { create, globals } from 'webgpu';

interface Flags {
  readonly GPUBufferUsage: Readonly<
    Record<'MAP_READ' | 'MAP_WRITE' | 'COPY_SRC' | 'COPY_DST' | 'UNIFORM' | 'STORAGE' | 'INDIRECT', number>
  >;
  readonly GPUShaderStage: Readonly<Record<'COMPUTE', number>>;
  readonly GPUMapMode: Readonly<Record<'READ', number>>;
}

/** WebGPU's flag namespaces, from Dawn (the package itself never relies on these globals). */
export const { GPUBufferUsage, GPUShaderStage, GPUMapMode } = globals as unknown as Flags;

// Dawn's Node.js bindings free the instance when the GPU object from create() is garbage
// collected, even while its devices still have work in flight, and the next event poll then
// crashes the process. Keep it for the life of the process.
let gpu: GPU | undefined;

/**
 * A fresh device. A missing adapter fails the test run with the fix, never skips: CI must not
 * pass without having run the GPU tests.
 */
export async function requestDevice(label = 'test'): Promise<GPUDevice> {
  gpu ??= create([]);
  const adapter = await gpu.requestAdapter();
  if (adapter === null) {
    const icd = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.VK_ICD_FILENAMES;
    throw new Error(
      `No WebGPU adapter (VK_ICD_FILENAMES=${icd ?? '(unset)'}). The @pol/webgpu tests need a real WebGPU: install Debian's ` +
        'chromium and libvulkan1 packages (sudo apt-get install -y chromium libvulkan1) and point VK_ICD_FILENAMES at ' +
        '/usr/lib/chromium/vk_swiftshader_icd.json (the vitest config does when the file exists).',
    );
  }
  return adapter.requestDevice({ label });
}

/** Count calls of some device (or queue) methods, by wrapping them on the instance; `restore` unwraps. */
export function countCalls<N extends string>(
  target: object,
  names: readonly N[],
): { counts: Record<N, number>; restore(): void } {
  const counts = {} as Record<N, number>;
  const restores: (() => void)[] = [];
  for (const name of names) {
    counts[name] = 0;
    const own = Object.getOwnPropertyDescriptor(target, name);
    const original = (target as Record<string, (...args: unknown[]) => unknown>)[name];
    if (original === undefined) throw new Error(`no method ${name}`);
    Object.defineProperty(target, name, {
      configurable: true,
      writable: true,
      value(this: unknown, ...args: unknown[]) {
        counts[name]++;
        return original.apply(this, args);
      },
    });
    restores.push(() => {
      if (own !== undefined) Object.defineProperty(target, name, own);
      else delete (target as Record<string, unknown>)[name];
    });
  }
  return {
    counts,
    restore() {
      for (const r of restores.reverse()) r();
    },
  };
}

/** Make `target[name]` throw `error` until `restore` is called (fault injection). */
export function failing(target: object, name: string, error: unknown): () => void {
  const own = Object.getOwnPropertyDescriptor(target, name);
  Object.defineProperty(target, name, {
    configurable: true,
    writable: true,
    value() {
      throw error;
    },
  });
  return () => {
    if (own !== undefined) Object.defineProperty(target, name, own);
    else delete (target as Record<string, unknown>)[name];
  };
}

/** What {@link watchCreateBuffer} saw: the buffers made, in order, and how to stop watching. */
export interface BufferWatch {
  readonly made: GPUBuffer[];
  /** Forget what was seen and count calls from zero again. */
  reset(): void;
  /** Put back the method that was there (Pol's own wrapper stays). */
  restore(): void;
}

/**
 * Record every buffer `device.createBuffer` makes until `restore`; with `failAt`, its `failAt`-th
 * call throws `error` instead (fault injection: a device out of memory part-way through a spec);
 * `onMade` sees each buffer as it is made.
 */
export function watchCreateBuffer(
  device: GPUDevice,
  options: { readonly failAt?: number; readonly error?: unknown; readonly onMade?: (buffer: GPUBuffer) => void } = {},
): BufferWatch {
  const original = device.createBuffer;
  const made: GPUBuffer[] = [];
  let calls = 0;
  device.createBuffer = (descriptor: GPUBufferDescriptor) => {
    calls++;
    if (calls === options.failAt) throw options.error ?? new RangeError('out of memory');
    const buffer = original.call(device, descriptor);
    made.push(buffer);
    options.onMade?.(buffer);
    return buffer;
  };
  return {
    made,
    reset() {
      made.length = 0;
      calls = 0;
    },
    restore() {
      device.createBuffer = original;
    },
  };
}

/** Pop a validation scope pushed before `f` and return its message, or null. */
export async function validationErrorOf(device: GPUDevice, f: () => void): Promise<string | null> {
  device.pushErrorScope('validation');
  try {
    f();
  } finally {
    // popped below
  }
  const error = await device.popErrorScope();
  return error === null ? null : error.message;
}

/** Resolve after the current macrotask (the package has no DOM or Node types, so reach for setTimeout). */
export function nextTask(): Promise<void> {
  const timers = globalThis as unknown as { setTimeout(f: () => void, ms: number): unknown };
  return new Promise((resolve) => timers.setTimeout(resolve, 0));
}

/** Run `f` inside a validation error scope of `device`: its result, and the device's message or null. */
export async function validationOf<R>(device: GPUDevice, f: () => R): Promise<{ result: R; error: string | null }> {
  device.pushErrorScope('validation');
  const result = f();
  return { result, error: (await device.popErrorScope())?.message ?? null };
}

/** What `f` throws, or `undefined` when it returns. */
export function thrownBy(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  return undefined;
}
