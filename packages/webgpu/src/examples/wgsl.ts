/**
 * The perceptron's WGSL kernels, as data: each kernel's bindings with their access, its workgroup
 * size and the body of its `main`, and `wgslOf`, which writes the shader module's code.
 *
 * Shapes are read from the bound ranges (`arrayLength`), so one pipeline serves every layer size.
 * Each binding is declared once, with its access: `read` for what lives on the parameters'
 * buffer and is only read there (weights, biases) and for the gradients SGD reads; `read_write`
 * for everything on the buffer the dispatch writes (WebGPU refuses a buffer bound both ways in
 * one dispatch, even as disjoint ranges).
 *
 * @module
 */

/**
 * How a kernel declares a binding: `var<storage, read>` or `var<storage, read_write>`.
 *
 * @example
 * ```ts
 * import { type BindingAccess, kernelSources } from '@pol/webgpu/examples';
 * const access: BindingAccess = kernelSources.linear.bindings.w;
 * console.log(access); // 'read'
 * ```
 */
export type BindingAccess = 'read' | 'read_write';

/**
 * One kernel: its bindings, its workgroup size, module-scope declarations, and the body of `main`
 * (which sees the invocation's `id: vec3u`).
 *
 * @example
 * ```ts
 * import { type KernelSource, wgslOf } from '@pol/webgpu/examples';
 * const double: KernelSource = {
 *   bindings: { x: 'read', y: 'read_write' },
 *   workgroupSize: 64,
 *   body: 'if (id.x < arrayLength(&y)) { y[id.x] = 2.0 * x[id.x]; }',
 * };
 * const module = device.createShaderModule({ code: wgslOf(double) });
 * console.log((await module.getCompilationInfo()).messages.length); // 0
 * ```
 */
export interface KernelSource {
  /** Each binding's name in WGSL and its access, in binding order (0, 1, 2, …). */
  readonly bindings: Readonly<Record<string, BindingAccess>>;
  /** The bindings whose elements are i32 (the others' are f32). */
  readonly i32?: readonly string[];
  readonly workgroupSize: number;
  /** Module-scope WGSL before `main` (an `override` constant, say). */
  readonly declarations?: string;
  /** The body of `main`. */
  readonly body: string;
}

const R = 'read';
const RW = 'read_write';

/**
 * The perceptron's eight kernels: the forward pass (`linear`, `relu`, `softmaxCrossEntropy`,
 * `mean`), the backward pass (`softmaxCrossEntropyBackward`, `linearBackward`, `reluBackward`)
 * and the update (`sgd`, whose learning rate is the pipeline-overridable constant `lr`). They sum
 * in the same order as the CPU kernels of `@pol/verbs/examples`, so the two agree to a few ulps.
 *
 * @example
 * ```ts
 * import { kernelSources } from '@pol/webgpu/examples';
 * console.log(Object.keys(kernelSources).length, Object.keys(kernelSources.linear.bindings)); // 8 [ 'x', 'w', 'b', 'y' ]
 * ```
 */
export const kernelSources = {
  // y[r, c] = b[c] + Σ_j x[r, j] · w[j, c]
  linear: {
    bindings: { x: RW, w: R, b: R, y: RW },
    workgroupSize: 64,
    body: `
  let m = arrayLength(&b); let k = arrayLength(&w) / m; let n = arrayLength(&x) / k;
  let i = id.x; if (i >= n * m) { return; }
  let r = i / m; let c = i % m;
  var acc = b[c];
  for (var j = 0u; j < k; j++) { acc += x[r * k + j] * w[j * m + c]; }
  y[i] = acc;`,
  },
  relu: {
    bindings: { x: RW, y: RW },
    workgroupSize: 64,
    body: `
  let i = id.x; if (i >= arrayLength(&y)) { return; }
  y[i] = max(x[i], 0.0);`,
  },
  // Per row: probs = softmax(z), rowLoss = −log probs[label].
  softmaxCrossEntropy: {
    bindings: { z: RW, labels: RW, probs: RW, rowLoss: RW },
    i32: ['labels'],
    workgroupSize: 64,
    body: `
  let n = arrayLength(&rowLoss); let c = arrayLength(&z) / n;
  let r = id.x; if (r >= n) { return; }
  var top = z[r * c];
  for (var j = 1u; j < c; j++) { top = max(top, z[r * c + j]); }
  var sum = 0.0;
  for (var j = 0u; j < c; j++) { sum += exp(z[r * c + j] - top); }
  for (var j = 0u; j < c; j++) { probs[r * c + j] = exp(z[r * c + j] - top) / sum; }
  rowLoss[r] = -(z[r * c + u32(labels[r])] - top - log(sum));`,
  },
  // loss[0] = mean of rowLoss (one invocation: the batch is small).
  mean: {
    bindings: { values: RW, result: RW },
    workgroupSize: 1,
    body: `
  let n = arrayLength(&values);
  var sum = 0.0;
  for (var i = 0u; i < n; i++) { sum += values[i]; }
  result[0] = sum / f32(n);`,
  },
  // dz = (probs − onehot(labels)) / batch
  softmaxCrossEntropyBackward: {
    bindings: { probs: RW, labels: RW, dz: RW },
    i32: ['labels'],
    workgroupSize: 64,
    body: `
  let n = arrayLength(&labels); let c = arrayLength(&probs) / n;
  let i = id.x; if (i >= n * c) { return; }
  let r = i / c; let j = i % c;
  dz[i] = (probs[i] - select(0.0, 1.0, i32(j) == labels[r])) / f32(n);`,
  },
  // One invocation per gradient entry: dw += xᵀ·dy, db += Σ_rows dy (gradients add up, as in the
  // CPU kernels, so the step zeroes them first), dx = dy·wᵀ.
  linearBackward: {
    bindings: { w: R, x: RW, dy: RW, dx: RW, dw: RW, db: RW },
    workgroupSize: 64,
    body: `
  let m = arrayLength(&db); let k = arrayLength(&dw) / m; let n = arrayLength(&dy) / m;
  let i = id.x;
  if (i < k * m) {
    let j = i / m; let c = i % m;
    var acc = 0.0;
    for (var r = 0u; r < n; r++) { acc += x[r * k + j] * dy[r * m + c]; }
    dw[i] += acc;
  } else if (i < k * m + m) {
    let c = i - k * m;
    var acc = 0.0;
    for (var r = 0u; r < n; r++) { acc += dy[r * m + c]; }
    db[c] += acc;
  } else if (i < k * m + m + n * k) {
    let t = i - k * m - m; let r = t / k; let j = t % k;
    var acc = 0.0;
    for (var c = 0u; c < m; c++) { acc += dy[r * m + c] * w[j * m + c]; }
    dx[t] = acc;
  }`,
  },
  reluBackward: {
    bindings: { x: RW, dy: RW, dx: RW },
    workgroupSize: 64,
    body: `
  let i = id.x; if (i >= arrayLength(&dx)) { return; }
  dx[i] = select(0.0, dy[i], x[i] > 0.0);`,
  },
  // p −= lr · g, with lr a pipeline-overridable constant.
  sgd: {
    bindings: { p: RW, g: R },
    workgroupSize: 64,
    declarations: 'override lr: f32 = 0.1;',
    body: `
  let i = id.x; if (i >= arrayLength(&p)) { return; }
  p[i] -= lr * g[i];`,
  },
} as const satisfies Record<string, KernelSource>;

/**
 * The name of one of the perceptron's kernels: what `GpuKernels.dispatch` takes, and the label of
 * its pipeline.
 *
 * @example
 * ```ts
 * import type { KernelName } from '@pol/webgpu/examples';
 * const forward: KernelName[] = ['linear', 'relu', 'linear', 'softmaxCrossEntropy', 'mean'];
 * console.log(forward.length); // 5
 * ```
 */
export type KernelName = keyof typeof kernelSources;

/**
 * A kernel's WGSL: its bindings declared as the source says (group 0, in order), then its
 * declarations and `main`.
 *
 * @example
 * ```ts
 * import { kernelSources, wgslOf } from '@pol/webgpu/examples';
 * const code = wgslOf(kernelSources.sgd);
 * console.log(code.startsWith('@group(0) @binding(0) var<storage, read_write> p'), code.includes('override lr')); // true true
 * ```
 */
export function wgslOf(source: KernelSource): string {
  const bindings = Object.entries(source.bindings).map(([name, access], i) => {
    const type = source.i32?.includes(name) === true ? 'i32' : 'f32';
    return `@group(0) @binding(${i}) var<storage, ${access}> ${name}: array<${type}>;`;
  });
  return `${bindings.join('\n')}
${source.declarations ?? ''}
@compute @workgroup_size(${source.workgroupSize}) fn main(@builtin(global_invocation_id) id: vec3u) {${source.body}
}`;
}
