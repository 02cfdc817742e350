/**
 * Encoding a recording for replay: the same dispatches, copies and clears, in the same order, each
 * dispatch seeing the same pipeline and bind groups as in the recording, with fewer calls. Checked
 * against a stand-in encoder that keeps WebGPU's pass state (the results on a real device are in
 * graph.test.ts), over hand-picked and random recordings.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { EncodeState, encodeOps } from './encode.js';
import type { EncoderOp, PassOp } from './recorder.js';

/** What a device would execute: dispatches with their state, copies and clears, in order. */
type Event =
  | { readonly k: 'dispatch'; readonly pipeline: unknown; readonly groups: readonly unknown[]; readonly x: number }
  | { readonly k: 'clear'; readonly buffer: unknown }
  | { readonly k: 'copy'; readonly source: unknown }
  | { readonly k: 'marker'; readonly label: string };

/** A stand-in command encoder keeping a pass's state as WebGPU does, and counting calls. */
function standIn() {
  const events: Event[] = [];
  const calls = { passes: 0, setPipeline: 0, setBindGroup: 0 };
  let open = false;
  const encoder = {
    beginComputePass() {
      if (open) throw new Error('a pass is already open');
      open = true;
      calls.passes++;
      let pipeline: unknown;
      const groups: unknown[] = [];
      return {
        setPipeline(p: unknown) {
          calls.setPipeline++;
          pipeline = p;
        },
        setBindGroup(index: number, group: unknown) {
          calls.setBindGroup++;
          groups[index] = group;
        },
        dispatchWorkgroups(x: number) {
          events.push({ k: 'dispatch', pipeline, groups: [...groups], x });
        },
        insertDebugMarker(label: string) {
          events.push({ k: 'marker', label });
        },
        pushDebugGroup() {},
        popDebugGroup() {},
        end() {
          open = false;
        },
      };
    },
    clearBuffer(buffer: unknown) {
      if (open) throw new Error('clearBuffer inside a pass');
      events.push({ k: 'clear', buffer });
    },
    copyBufferToBuffer(source: unknown) {
      if (open) throw new Error('copyBufferToBuffer inside a pass');
      events.push({ k: 'copy', source });
    },
    insertDebugMarker(label: string) {
      events.push({ k: 'marker', label });
    },
    pushDebugGroup() {},
    popDebugGroup() {},
  };
  return { encoder: encoder as unknown as GPUCommandEncoder, events, calls, isOpen: () => open };
}

/** The recording encoded naively: every pass begun and ended, every call made, `times` over. */
function naive(ops: readonly EncoderOp[], times: number): Event[] {
  const s = standIn();
  for (let t = 0; t < times; t++) {
    for (const op of ops) {
      if (op.k === 'pass') {
        const pass = s.encoder.beginComputePass();
        for (const p of op.ops) {
          if (p.k === 'pipeline') pass.setPipeline(p.pipeline);
          else if (p.k === 'group') pass.setBindGroup(p.index, p.group);
          else if (p.k === 'dispatch') pass.dispatchWorkgroups(p.x, p.y, p.z);
          else if (p.k === 'marker') pass.insertDebugMarker(p.label);
        }
        pass.end();
      } else if (op.k === 'clear') s.encoder.clearBuffer(op.buffer, op.offset, op.size);
      else if (op.k === 'copy')
        s.encoder.copyBufferToBuffer(op.source, op.sourceOffset, op.destination, op.destinationOffset, op.size);
      else if (op.k === 'marker') s.encoder.insertDebugMarker(op.label);
    }
  }
  return s.events;
}

const pipelines = ['p0', 'p1', 'p2'].map((name) => ({ name }) as unknown as GPUComputePipeline);
const groups = ['g0', 'g1', 'g2', 'g3'].map((name) => ({ name }) as unknown as GPUBindGroup);
const buffers = ['b0', 'b1'].map((name) => ({ name }) as unknown as GPUBuffer);
const [p0, p1] = pipelines as [GPUComputePipeline, GPUComputePipeline];
const [g0, g1, g2] = groups as [GPUBindGroup, GPUBindGroup, GPUBindGroup];
const [b0] = buffers as [GPUBuffer];

const pipeline = (p: GPUComputePipeline): PassOp => ({ k: 'pipeline', pipeline: p });
const group = (index: number, g: GPUBindGroup): PassOp => ({ k: 'group', index, group: g, offsets: undefined });
const dispatch = (x: number): PassOp => ({ k: 'dispatch', x, y: 1, z: 1 });
const pass = (...ops: PassOp[]): EncoderOp => ({ k: 'pass', descriptor: undefined, ops });

function encoded(ops: readonly EncoderOp[], times: number) {
  const s = standIn();
  encodeOps(s.encoder, ops, times, new EncodeState());
  expect(s.isOpen()).toBe(false);
  return s;
}

/**
 * Each dispatch of `got` sees what the naive encoding's does: the same pipeline, and the same group
 * at every index the naive one has set (a merged pass may still hold groups of an earlier pass,
 * at indices a valid recording's dispatch does not use without setting them).
 */
function sameWork(got: readonly Event[], want: readonly Event[]): void {
  expect(got.map((e) => e.k)).toEqual(want.map((e) => e.k));
  got.forEach((e, i) => {
    const w = want[i] as Event;
    if (e.k !== 'dispatch' || w.k !== 'dispatch') {
      expect(e).toEqual(w);
      return;
    }
    expect([e.pipeline, e.x]).toEqual([w.pipeline, w.x]);
    w.groups.forEach((g, index) => {
      if (g !== undefined) expect(e.groups[index]).toBe(g);
    });
  });
}

describe('encodeOps', () => {
  test('adjacent passes become one, and what is set already is not set again', () => {
    const ops = [
      pass(pipeline(p0), group(0, g0), dispatch(1), group(0, g1), dispatch(2)),
      pass(pipeline(p0), group(0, g1), dispatch(3)),
    ];
    const s = encoded(ops, 1);
    sameWork(s.events, naive(ops, 1));
    expect(s.calls).toEqual({ passes: 1, setPipeline: 1, setBindGroup: 2 });
  });

  test('a clear or copy between passes ends the pass, and the next pass sets its state again', () => {
    const clear: EncoderOp = { k: 'clear', buffer: b0, offset: 0, size: 4 };
    const ops = [clear, pass(pipeline(p0), group(0, g0), dispatch(1)), clear, pass(pipeline(p0), group(0, g0), dispatch(2))];
    const s = encoded(ops, 1);
    sameWork(s.events, naive(ops, 1));
    expect(s.calls).toEqual({ passes: 2, setPipeline: 2, setBindGroup: 2 });
  });

  test('times: k steps one after the other, the passes of one step merging with the next', () => {
    const ops = [pass(pipeline(p0), group(0, g0), dispatch(1), pipeline(p1), group(0, g1), dispatch(2))];
    const s = encoded(ops, 4);
    sameWork(s.events, naive(ops, 4));
    expect(s.events.length).toBe(8);
    expect(s.calls).toEqual({ passes: 1, setPipeline: 8, setBindGroup: 8 });
    const one = [pass(pipeline(p0), group(0, g0), dispatch(1))];
    expect(encoded(one, 3).calls).toEqual({ passes: 1, setPipeline: 1, setBindGroup: 1 });
  });

  test('dynamic offsets and null groups are always set, and forget the group at their index', () => {
    const dynamic: PassOp = { k: 'group', index: 0, group: g0, offsets: [256] };
    const ops = [pass(pipeline(p0), dynamic, dispatch(1), group(0, g0), dispatch(2), dynamic, dispatch(3))];
    expect(encoded(ops, 1).calls.setBindGroup).toBe(3);
  });

  test('a pass with timestamp writes is never merged', () => {
    const timed: EncoderOp = {
      k: 'pass',
      descriptor: { timestampWrites: {} as GPUComputePassTimestampWrites },
      ops: [pipeline(p0), group(0, g0), dispatch(1)],
    };
    const ops = [timed, pass(pipeline(p0), group(0, g0), dispatch(2)), timed];
    const s = encoded(ops, 1);
    sameWork(s.events, naive(ops, 1));
    expect(s.calls.passes).toBe(3);
  });

  test('a state object serves any number of encodings, and is left reset', () => {
    const state = new EncodeState();
    const ops = [pass(pipeline(p0), group(0, g2), dispatch(1))];
    for (let i = 0; i < 3; i++) {
      const s = standIn();
      encodeOps(s.encoder, ops, 2, state);
      expect(s.calls).toEqual({ passes: 1, setPipeline: 1, setBindGroup: 1 });
      expect([state.pass, state.pipeline, state.groups.every((g) => g === undefined)]).toEqual([undefined, undefined, true]);
    }
  });

  // Valid recordings, as a capture records them: each pass sets a pipeline and group 0 before
  // its first dispatch (a dispatch without them would have failed the capture).
  const passOps = fc
    .tuple(
      fc.constantFrom(...pipelines),
      fc.constantFrom(...groups),
      fc.array(
        fc.oneof(
          fc.constantFrom(...pipelines).map(pipeline),
          fc.tuple(fc.integer({ min: 0, max: 2 }), fc.constantFrom(...groups)).map(([i, g]) => group(i, g)),
          fc.integer({ min: 1, max: 9 }).map(dispatch),
          fc.constant<PassOp>({ k: 'marker', label: 'm' }),
        ),
        { maxLength: 12 },
      ),
    )
    .map(([p, g, rest]) => pass(pipeline(p), group(0, g), ...rest));
  const encoderOp = fc.oneof(
    { weight: 4, arbitrary: passOps },
    {
      weight: 1,
      arbitrary: fc.constantFrom(...buffers).map((buffer): EncoderOp => ({ k: 'clear', buffer, offset: 0, size: 4 })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(...buffers)
        .map((source): EncoderOp => ({ k: 'copy', source, sourceOffset: 0, destination: b0, destinationOffset: 0, size: 4 })),
    },
    { weight: 1, arbitrary: fc.constant<EncoderOp>({ k: 'marker', label: 'between' }) },
  );

  test('property: any valid recording, any number of steps, encodes the same work with no more calls', () => {
    fc.assert(
      fc.property(fc.array(encoderOp, { maxLength: 8 }), fc.integer({ min: 1, max: 4 }), (ops, times) => {
        const s = encoded(ops, times);
        sameWork(s.events, naive(ops, times));
        const recordedPasses = ops.filter((op) => op.k === 'pass').length * times;
        const setCalls = ops
          .flatMap((op) => (op.k === 'pass' ? op.ops : []))
          .filter((p) => p.k === 'pipeline' || p.k === 'group').length;
        expect(s.calls.passes).toBeLessThanOrEqual(recordedPasses);
        expect(s.calls.setPipeline + s.calls.setBindGroup).toBeLessThanOrEqual(setCalls * times);
      }),
      { numRuns: 500 },
    );
  });
});
