/**
 * A small WebAssembly module for the tests of WASM kernels: it imports its memory (as an
 * emscripten build imports or exports one) and exports three functions that take pointers. Its
 * text, assembled once with wabt's wat2wasm into the bytes below:
 *
 * ```wat
 * (module
 *   (import "env" "memory" (memory 1))
 *   ;; out[i] = a[i] * b[i], for i in [0, n)
 *   (func (export "mul") (param $a i32) (param $b i32) (param $out i32) (param $n i32)
 *     (local $i i32) (local $at i32)
 *     (block $done
 *       (loop $next
 *         (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
 *         (local.set $at (i32.shl (local.get $i) (i32.const 2)))
 *         (f32.store (i32.add (local.get $out) (local.get $at))
 *           (f32.mul (f32.load (i32.add (local.get $a) (local.get $at)))
 *                    (f32.load (i32.add (local.get $b) (local.get $at)))))
 *         (local.set $i (i32.add (local.get $i) (i32.const 1)))
 *         (br $next))))
 *   ;; out[i] = x[i] * k, for i in [0, n)
 *   (func (export "scale") (param $x i32) (param $out i32) (param $n i32) (param $k f32)
 *     ... the same loop, storing x[i] * k ...)
 *   ;; grows the memory from inside the module, as a module's malloc does; returns the old size in pages
 *   (func (export "grow") (param $pages i32) (result i32)
 *     (memory.grow (local.get $pages))))
 * ```
 */

const bytes =
  'AGFzbQEAAAABFANgBH9/f38AYAR/f399AGABfwF/Ag8BA2VudgZtZW1vcnkCAAEDBAMAAQIHFgMDbXVsAAAFc2NhbGUAAQRncm93AAIKeAM6AQJ/AkADQCAEIANPDQEgBEECdCEFIAIgBWogACAFaioCACABIAVqKgIAlDgCACAEQQFqIQQMAAsLCzQBAn8CQANAIAQgAk8NASAEQQJ0IQUgASAFaiAAIAVqKgIAIAOUOAIAIARBAWohBAwACwsLBgAgAEAACw==';

/** The module's exports. */
export interface KernelExports {
  mul(a: number, b: number, out: number, n: number): void;
  scale(x: number, out: number, n: number, k: number): void;
  grow(pages: number): number;
}

/** A WebAssembly memory, as far as these tests use one. */
export interface TestMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum?: number }) => TestMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: KernelExports };
}

// Node's type declarations of this Node line declare no WebAssembly global; the runtime has it.
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** A fresh memory of `pages` pages (at most `maximum`), and an instance of the module over it. */
export function instantiate(pages: number, maximum: number): { memory: TestMemory; kernels: KernelExports } {
  const memory = new wasm.Memory({ initial: pages, maximum });
  const module = new wasm.Module(Uint8Array.from(Buffer.from(bytes, 'base64')));
  const { exports } = new wasm.Instance(module, { env: { memory } });
  return { memory, kernels: exports };
}
