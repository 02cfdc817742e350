// A worker thread for shared-slab.threads.test.ts: it claims regions of a shared slab with the
// built @pol/arena (plain JavaScript, as a worker of a user's runs it) and does what the main
// thread asks, answering each message.
import { parentPort, workerData } from 'node:worker_threads';
import { scratchspace } from '@pol/core';
import { claimRegion } from '../../dist/index.js';

const { slab, control, id } = workerData;
const gate = new Int32Array(control);
let held;

function fillRegion(arena, value) {
  // Every byte of the region, carved in pieces of several dtypes (contiguous at alignment 8), some in
  // a frame as a kernel's scratch would be, each piece written with `value`.
  arena.reset();
  arena.alloc('uint8', [arena.capacity >> 1]).data.fill(value);
  scratchspace(arena, (frame) => {
    for (let i = 0; i < 16; i++) {
      const a = frame.tryAlloc('float64', [3]);
      if (a === undefined) break;
      new Uint8Array(a.data.buffer, a.data.byteOffset, a.data.byteLength).fill(value);
    }
  });
  for (;;) {
    const a = arena.tryAlloc('uint8', [8]);
    if (a === undefined) break;
    a.data.fill(value);
  }
}

parentPort.on('message', (message) => {
  switch (message.kind) {
    case 'race': {
      parentPort.postMessage({ kind: 'ready', id });
      // Everyone waits here until the main thread opens the gate, then claims at once.
      Atomics.wait(gate, 0, message.round - 1);
      try {
        held = claimRegion(slab, { region: message.region, alignment: 8 });
        const epoch = held.epoch; // before fillRegion's reset moves it on
        fillRegion(held, id);
        parentPort.postMessage({ kind: 'raced', id, won: true, epoch });
      } catch (error) {
        parentPort.postMessage({ kind: 'raced', id, won: false, code: error.code });
      }
      break;
    }
    case 'claim': {
      held = claimRegion(slab, { alignment: 8 });
      fillRegion(held, id);
      parentPort.postMessage({ kind: 'claimed', id, byteOffset: held.byteOffset, capacity: held.capacity });
      break;
    }
    case 'release': {
      held?.dispose();
      held = undefined;
      parentPort.postMessage({ kind: 'released', id });
      break;
    }
    case 'die': {
      held = claimRegion(slab, { region: message.region });
      held.alloc('uint8', [8]).data.fill(id);
      if (message.how === 'exit') process.exit(3);
      throw new Error(`worker ${id} throws while holding region ${message.region}`);
    }
  }
});
