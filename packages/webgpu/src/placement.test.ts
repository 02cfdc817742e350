/**
 * Placement on a real device, with third-party-style WGSL that declares every input `read`: a
 * transformer block that one arena cannot hold (WebGPU refuses it) and two cannot either (an odd
 * cycle); planned, it runs on three slabs with no validation error, replays what it computes
 * eagerly, and a steady step carves the same ranges and creates nothing. Random steps, planned,
 * never bind one buffer both ways.
 */
import { alloc, InvalidArgumentError, type Space, scratchspace, Undef } from '@pol/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  bindGroup,
  capture,
  deviceArena,
  download,
  type GpuArray,
  instrument,
  PlacementError,
  placedArena,
  planPlacement,
  UsageConflictError,
  upload,
} from './index.js';
import { countCalls, requestDevice, validationOf } from './test-support/gpu.js';
import { block, compile, D, input, type Kernels, T, type Weights, weights } from './test-support/transformer.js';

let device: GPUDevice;
let kernels: Kernels;
let params: Weights;
beforeAll(async () => {
  device = instrument(await requestDevice('placement'));
  kernels = compile(device);
  params = weights(device);
});
afterAll(() => device.destroy());

const validation = <R>(f: () => R) => validationOf(device, f);

const data = async (x: GpuArray<'float32'>) => Array.from((await download(x)).data);

describe('a transformer block whose kernels read every input `read`', () => {
  test('on one arena, WebGPU refuses it; checked mode says so first', async () => {
    const one = deviceArena(device, 1 << 16, { label: 'one arena' });
    const b = block(device, kernels, params, one);
    upload(b.x, input());
    const { error } = await validation(() => b.step());
    expect(error).toMatch(/one arena.*writable usage and another usage/s);
    const checked = deviceArena(device, 1 << 16, { label: 'checked one', checked: true });
    const c = block(device, kernels, params, checked);
    expect(() => c.step()).toThrow(UsageConflictError);
  });

  test('planned: three slabs (two cannot do: an odd cycle), valid, and what a buffer per array computes', async () => {
    let reference: number[] = [];
    const placement = await planPlacement(
      device,
      (space) => {
        const b = block(device, kernels, params, space);
        upload(b.x, input());
        b.step();
        void download(b.out).then((h) => {
          reference = Array.from(h.data);
        });
      },
      { label: 'block' },
    );
    expect(placement.slabs).toBe(3);
    expect(placement.carves).toBe(10); // x, out, and the step's 8 activations
    expect(placement.conflicts).toBeGreaterThanOrEqual(11);
    await device.queue.onSubmittedWorkDone();
    const arena = placedArena(device, placement, { checked: true });
    const b = block(device, kernels, params, arena);
    upload(b.x, input());
    const { error } = await validation(() => b.step()); // checked: a conflict would throw here
    expect(error).toBeNull();
    expect(reference.length).toBe(T * D);
    expect(await data(b.out)).toEqual(reference);
    arena.destroy();
  });

  test('a steady step lands on the same ranges, creates nothing, and replays what it computes eagerly', async () => {
    const placement = await planPlacement(device, (space) => block(device, kernels, params, space).step());
    const eagerArena = placedArena(device, placement, { label: 'eager' });
    const capturedArena = placedArena(device, placement, { label: 'captured' });
    const eager = block(device, kernels, params, eagerArena);
    const captured = block(device, kernels, params, capturedArena);
    // The same ranges, step after step: the step's eight carves, as the block makes them.
    const ranges = () => {
      const seen: string[] = [];
      scratchspace(eagerArena, (f) => {
        for (let i = 0; i < 8; i++) {
          const a = alloc(f, 'float32', [T, i === 1 ? 3 * D : i === 6 ? 4 * D : D]);
          seen.push(`${a.buffer.label}@${a.offset}`);
        }
      });
      return seen.join('|');
    };
    const first = ranges();
    expect(ranges()).toBe(first);
    expect(new Set(first.split('|').map((r) => r.split('@')[0])).size).toBe(3); // spread over the three slabs
    upload(eager.x, input(2));
    upload(captured.x, input(2));
    eager.step();
    const graph = await capture(device, captured.step);
    const calls = countCalls(device, ['createBuffer', 'createBindGroup']);
    try {
      for (let i = 0; i < 3; i++) eager.step();
      graph.replay({ times: 3 });
      expect(calls.counts).toEqual({ createBuffer: 0, createBindGroup: 0 });
    } finally {
      calls.restore();
    }
    expect(await data(captured.out)).toEqual(await data(eager.out));
    upload(captured.x, input(-1)); // a new input, replayed
    upload(eager.x, input(-1));
    graph.replay();
    eager.step();
    expect(await data(captured.out)).toEqual(await data(eager.out));
    graph.dispose();
    eagerArena.destroy();
    capturedArena.destroy();
  });
});

describe('random steps, planned, never bind one buffer both ways', () => {
  let pipelines: GPUComputePipeline[];
  beforeAll(() => {
    // out = in0 (+ in1 …): inputs `read`, 1 to 3 of them.
    pipelines = [1, 2, 3].map((inputs) =>
      device.createComputePipeline({
        layout: 'auto',
        compute: {
          entryPoint: 'main',
          module: device.createShaderModule({
            code: `${Array.from({ length: inputs }, (_, i) => `@group(0) @binding(${i}) var<storage, read> in${i}: array<f32>;`).join('\n')}
              @group(0) @binding(${inputs}) var<storage, read_write> out: array<f32>;
              @compute @workgroup_size(16) fn main(@builtin(global_invocation_id) id: vec3u) {
                let i = id.x; if (i < arrayLength(&out)) { out[i] = 0.5 * (${Array.from({ length: inputs }, (_, j) => `in${j}[i]`).join(' + ')}) + 1.0; }
              }`,
          }),
        },
      }),
    );
  });

  // A step: `given` arrays carved first, then dispatches, each reading 1 to 3 earlier arrays and
  // writing a new one (some in a nested frame that closes before the next).
  const steps = fc.record({
    given: fc.integer({ min: 1, max: 3 }),
    dispatches: fc.array(fc.record({ inputs: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), framed: fc.boolean() }), {
      minLength: 1,
      maxLength: 10,
    }),
  });

  type Step = { given: number; dispatches: { inputs: number[]; framed: boolean }[] };

  /** Carve the step's inputs and result, fill the inputs, and run it; the result is the last array written, copied by a dispatch. */
  function run(space: Space<'gpu'>, spec: Step): GpuArray<'float32'> {
    const live: GpuArray<'float32'>[] = [];
    for (let i = 0; i < spec.given; i++) {
      const x = alloc(space, 'float32', [16]);
      upload(
        x,
        Float32Array.from({ length: 16 }, (_, j) => i + j / 16),
      );
      live.push(x);
    }
    const result = alloc(space, 'float32', [16]);
    scratchspace(space, (frame) => {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      const dispatch = (from: readonly GpuArray<'float32'>[], to: GpuArray<'float32'>) => {
        const pipeline = pipelines[from.length - 1] as GPUComputePipeline;
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, bindGroup(device, pipeline.getBindGroupLayout(0), [...from, to]));
        pass.dispatchWorkgroups(1);
      };
      for (const d of spec.dispatches) {
        const from = [...new Set(d.inputs.map((i) => live[i % live.length] as GpuArray<'float32'>))];
        if (d.framed) {
          // the result in the outer frame, through scratch in an inner frame, written and read there
          const y = alloc(frame, 'float32', [16]);
          scratchspace(frame, (inner) => {
            const t = alloc(inner, 'float32', [16]);
            dispatch(from, t);
            dispatch([t], y);
          });
          live.push(y);
        } else {
          const y = alloc(frame, 'float32', [16]);
          dispatch(from, y);
          live.push(y);
        }
      }
      dispatch([live[live.length - 1] as GpuArray<'float32'>], result);
      pass.end();
      device.queue.submit([encoder.finish()]);
    });
    return result;
  }

  test('property: no validation error, no conflict in checked mode, and what a buffer per array computes', async () => {
    await fc.assert(
      fc.asyncProperty(steps, async (spec) => {
        let planned: Promise<number[]> | undefined;
        const placement = await planPlacement(device, (space) => {
          const result = run(space, spec);
          planned = data(result);
        });
        const want = await (planned as Promise<number[]>);
        const arena = placedArena(device, placement, { checked: true });
        const { result, error } = await validation(() => run(arena, spec));
        expect(error).toBeNull();
        expect(await data(result)).toEqual(want);
        arena.destroy();
      }),
      { numRuns: 20 },
    );
  });
});

/** b[0] = a[0], with a read-only: compiled on `on`. */
function copyFirst(on: GPUDevice): GPUComputePipeline {
  return on.createComputePipeline({
    layout: 'auto',
    compute: {
      entryPoint: 'main',
      module: on.createShaderModule({
        code: `@group(0) @binding(0) var<storage, read> a: array<f32>;
          @group(0) @binding(1) var<storage, read_write> b: array<f32>;
          @compute @workgroup_size(1) fn main() { b[0] = a[0]; }`,
      }),
    },
  });
}

describe('refusals, each changing nothing', () => {
  test.each<[string, () => unknown, RegExp]>([
    ['not a device', () => planPlacement({} as GPUDevice, () => {}), /needs a GPUDevice/],
    ['no warm-up', () => planPlacement(device, 3 as never), /needs a function warmUp, got 3/],
    ['an async warm-up', () => planPlacement(device, async () => {}), /synchronous warm-up/],
    ['an unknown option', () => planPlacement(device, () => {}, { slabs: 2 } as never), /no option 'slabs'/],
    ['a bad label', () => planPlacement(device, () => {}, { label: 3 } as never), /label must be a string, got 3/],
    ['a bad alignment', () => planPlacement(device, () => {}, { alignment: 100 }), /power of two/],
    ['not a placement', () => placedArena(device, {} as never), /needs a Placement/],
  ])('%s', (_name, f, message) => {
    const calls = countCalls(device, ['createBuffer']);
    try {
      expect(f).toThrow(message);
      expect(calls.counts.createBuffer).toBe(0);
    } finally {
      calls.restore();
    }
  });

  test('a warm-up that throws: the error, and the planning buffers go', async () => {
    const boom = new Error('boom');
    const calls = countCalls(device, ['createBuffer']);
    let made: GpuArray | undefined;
    try {
      expect(() =>
        planPlacement(device, (space) => {
          made = alloc(space, 'float32', [4]);
          throw boom;
        }),
      ).toThrow(boom);
      expect(calls.counts.createBuffer).toBe(1);
    } finally {
      calls.restore();
    }
    await device.queue.onSubmittedWorkDone();
    await new Promise((r) => setTimeout(r, 0));
    expect(() => upload(made as GpuArray<'float32'>, new Float32Array(4))).toThrow(/destroyed/);
    // and the device plans again
    expect((await planPlacement(device, (s) => void alloc(s, 'float32', [4]))).carves).toBe(1);
  });

  test('a warm-up with a validation error (one array bound both ways) rejects with PlacementError', async () => {
    const fresh = instrument(await requestDevice('placement invalid')); // unchecked: the device reports it, asynchronously
    try {
      const rw = copyFirst(fresh);
      const promise = planPlacement(fresh, (space) => {
        const x = alloc(space, 'float32', [4]);
        const encoder = fresh.createCommandEncoder();
        const pass = encoder.beginComputePass();
        pass.setPipeline(rw);
        pass.setBindGroup(0, bindGroup(fresh, rw.getBindGroupLayout(0), [x, x]));
        pass.dispatchWorkgroups(1);
        pass.end();
        fresh.queue.submit([encoder.finish()]);
      });
      await expect(promise).rejects.toThrow(PlacementError);
      await expect(promise).rejects.toThrow(/validation error.*no placement can fix it.*The device said/s);
    } finally {
      fresh.destroy();
    }
  });

  test('layouts Pol did not see made: PlacementError, advising instrument()', async () => {
    const late = await requestDevice('placement late');
    try {
      const pipeline = copyFirst(late); // compiled before Pol met the device
      const layout = pipeline.getBindGroupLayout(0);
      const promise = planPlacement(late, (space) => {
        const a = alloc(space, 'float32', [4]);
        const b = alloc(space, 'float32', [4]);
        const encoder = late.createCommandEncoder();
        const pass = encoder.beginComputePass();
        pass.setPipeline(pipeline);
        pass.setBindGroup(
          0,
          late.createBindGroup({
            layout,
            entries: [
              { binding: 0, resource: a },
              { binding: 1, resource: b },
            ],
          }),
        );
        pass.dispatchWorkgroups(1);
        pass.end();
        late.queue.submit([encoder.finish()]);
      });
      await expect(promise).rejects.toThrow(PlacementError);
      await expect(promise).rejects.toThrow(/binding types Pol does not know.*instrument\(device\)/s);
    } finally {
      late.destroy();
    }
  });

  test('a placed arena refuses a carve past the plan, or larger than the warm-up’s, and a failed spec leaves it as it was', async () => {
    const placement = await planPlacement(device, (space) => {
      alloc(space, 'float32', [4]);
      scratchspace(space, (f) => alloc(f, 'float32', [8]));
    });
    const arena = placedArena(device, placement);
    expect(() => alloc(arena, 'float32', [64])).toThrow(/carve #0 was 16 bytes/);
    expect(arena.carves).toBe(0);
    alloc(arena, 'float32', [4]);
    scratchspace(arena, (f) => {
      alloc(f, 'float32', [8]);
      expect(() => alloc(f, 'float32', [1])).toThrow(PlacementError);
      expect(() => alloc(f, 'float32', [1])).toThrow(/carve #2.*holds 2/);
    });
    expect(arena.carves).toBe(1);
    // a spec that fails part-way: rolled back
    expect(() => alloc(arena, { a: Undef('float32', [8]), b: Undef('float32', [-1]) })).toThrow();
    expect(arena.carves).toBe(1);
    arena.reset();
    expect(arena.carves).toBe(0);
    expect(() => placedArena(device, placement, { checked: 'yes' } as never)).toThrow(InvalidArgumentError);
    arena.destroy();
  });

  test('frames close innermost first', async () => {
    const placement = await planPlacement(device, (space) => {
      scratchspace(space, (f) => {
        alloc(f, 'float32', [4]);
        scratchspace(f, (g) => alloc(g, 'float32', [4]));
      });
    });
    const arena = placedArena(device, placement);
    const outer = scratchspace(arena);
    alloc(outer, 'float32', [4]);
    const inner = scratchspace(outer);
    alloc(inner, 'float32', [4]);
    expect(arena.carves).toBe(2);
    outer.close(); // closes inner too
    expect([inner.isOpen, outer.isOpen, arena.carves]).toEqual([false, false, 0]);
    expect(() => alloc(inner, 'float32', [4])).toThrow(/has closed/);
    arena.destroy();
  });
});
