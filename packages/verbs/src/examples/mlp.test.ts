import { type HostArray, hostArray, Similar } from '@pol/core';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { Shadows, walkShadows } from '../shadows.js';
import { countingSpace } from '../test-support/counting.js';
import { linear, linearBackward, relu, reluBackward, softmaxCrossEntropy, softmaxCrossEntropyBackward } from './layers.js';
import { blobs, initMlp, type Mlp, train, trainStep } from './mlp.js';
import { seededRandom } from './random.js';

type F32 = HostArray<'float32'>;
type I32 = HostArray<'int32'>;
const host = Similar(new Float32Array(0));

function forward(params: Mlp, x: F32, labels: I32) {
  const h = linear(params.layer1, x).y;
  const a = relu(h).y;
  const logits = linear(params.layer2, a).y;
  return { h, a, ...softmaxCrossEntropy(logits, labels) };
}

function gradients(params: Mlp, x: F32, labels: I32): Mlp {
  const grads = Shadows(params);
  const { h, a, probs } = forward(params, x, labels);
  const { dlogits } = softmaxCrossEntropyBackward(probs, labels);
  const da = linearBackward(params.layer2, a, dlogits, { dlayer: grads.layer2 }).dx;
  const dh = reluBackward(h, da).dx;
  linearBackward(params.layer1, x, dh, { dlayer: grads.layer1 });
  return grads;
}

test('the layers compute what they say', () => {
  const layer = { w: hostArray(Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3]), b: hostArray(Float32Array.from([1, 0, -1])) };
  const x = hostArray(Float32Array.from([1, 1, 2, 0]), [2, 2]);
  expect(Array.from(linear(layer, x).y.data)).toEqual([6, 7, 8, 3, 4, 5]);
  expect(Array.from(relu(hostArray(Float32Array.from([-1, 0, 2]))).y.data)).toEqual([0, 0, 2]);
  const { loss, probs } = softmaxCrossEntropy(hostArray(Float32Array.from([0, 0]), [1, 2]), hostArray(Int32Array.from([1])));
  expect(loss.data[0]).toBeCloseTo(Math.LN2, 6);
  expect(Array.from(probs.data)).toEqual([0.5, 0.5]);
});

test('property: backpropagation through the verbs matches finite differences of the loss', () => {
  fc.assert(
    fc.property(fc.nat(), fc.integer({ min: 2, max: 6 }), (seed, hidden) => {
      const random = seededRandom(seed);
      const { x, labels } = blobs(host, random, 3, 3);
      const params = initMlp(host, random, 2, hidden, 3);
      const grads = gradients(params, x, labels);
      // The loss at the current parameters, and the ReLU pattern (which hidden units are on).
      const at = () => {
        const { h, loss } = forward(params, x, labels);
        return { loss: loss.data[0] ?? Number.NaN, on: Array.from(h.data, (v) => v > 0).join() };
      };
      let checked = 0;
      walkShadows(params, grads, (p, g, path) => {
        for (let i = 0; i < p.data.length; i++) {
          const saved = p.data[i] ?? 0;
          const step = 1e-3;
          p.data[i] = saved + step;
          const up = at();
          p.data[i] = saved - step;
          const down = at();
          p.data[i] = saved;
          // A difference across a ReLU kink measures no derivative: skip it.
          if (up.on !== down.on) continue;
          const fd = (up.loss - down.loss) / (Math.fround(saved + step) - Math.fround(saved - step));
          expect(Math.abs((g.data[i] ?? 0) - fd), `${path}[${i}]`).toBeLessThan(1e-3 + 1e-2 * Math.abs(fd));
          checked++;
        }
      });
      expect(checked).toBeGreaterThan(0);
    }),
    { numRuns: 25 },
  );
});

function copyOf(params: Mlp): Mlp {
  const copy = (a: F32): F32 => hostArray(Float32Array.from(a.data), a.dims);
  return {
    layer1: { w: copy(params.layer1.w), b: copy(params.layer1.b) },
    layer2: { w: copy(params.layer2.w), b: copy(params.layer2.b) },
  };
}

test('trainStep is forward, backward into the shadows (zeroed first), and an SGD step', () => {
  const random = seededRandom(3);
  const { x, labels } = blobs(host, random, 5, 3);
  const params = initMlp(host, random, 2, 4, 3);
  const before = copyOf(params);
  const expected = gradients(before, x, labels);
  const grads = Shadows(params);
  grads.layer1.w.data.fill(99); // stale gradients from a previous step
  const lossBefore = forward(params, x, labels).loss.data[0];
  const space = countingSpace();
  const { loss } = trainStep(space, params, grads, x, labels, { lr: 0.5 });
  expect(loss.data[0]).toBe(lossBefore);
  expect(space.live).toBe(1); // only the loss outlives the step
  expect(space.openFrames).toEqual([]);
  walkShadows(grads, expected, (g, e) => expect(Array.from(g.data)).toEqual(Array.from(e.data)));
  walkShadows(params, before, (p, b, path) => {
    const g = path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], grads) as F32;
    expect(Array.from(p.data)).toEqual(Array.from(b.data, (v, i) => Math.fround(v - 0.5 * (g.data[i] ?? 0))));
  });
});

test('training on GC memory: the loss falls, deterministically', () => {
  const a = train(host, { steps: 60 });
  const b = train(host, { steps: 60 });
  expect(a).toEqual(b);
  expect(a[59]).toBeLessThan((a[0] ?? 0) / 3);
});
