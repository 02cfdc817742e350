// A module worker of the page: claims a region when the gate opens, fills it, releases on request.
import { claimRegion } from '/pol/arena/index.js';

let slab;
let gate;
let id;
let held;

self.addEventListener('message', (e) => {
  const m = e.data;
  if (m.kind === 'start') {
    ({ slab, id } = m);
    gate = new Int32Array(m.control);
    self.postMessage({ kind: 'started' });
  } else if (m.kind === 'race') {
    self.postMessage({ kind: 'ready' });
    Atomics.wait(gate, 0, m.round - 1); // a worker may block; the page may not
    try {
      held = claimRegion(slab, { region: m.region, alignment: 8 });
      for (;;) {
        const a = held.tryAlloc('uint8', [8]);
        if (a === undefined) break;
        a.data.fill(id);
      }
      self.postMessage({ kind: 'raced', id, won: true });
    } catch (error) {
      self.postMessage({ kind: 'raced', id, won: false, code: error.code });
    }
  } else if (m.kind === 'release') {
    held.dispose();
    held = undefined;
    self.postMessage({ kind: 'released' });
  }
});
