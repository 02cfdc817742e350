// The page of shared-slab.browser.test.ts: module workers race to claim one region of a shared
// slab, as in the Node.js test, in a cross-origin-isolated page (which SharedArrayBuffer needs).
import { createSharedSlab, describeSharedSlab } from '/pol/arena/index.js';

const WORKERS = 4;
const RACES = 40;

function reply(worker) {
  return new Promise((resolve) => worker.addEventListener('message', (e) => resolve(e.data), { once: true }));
}

async function run() {
  const slab = createSharedSlab({ regions: 2, regionByteLength: 1024 });
  const control = new SharedArrayBuffer(4);
  const gate = new Int32Array(control);
  const workers = Array.from({ length: WORKERS }, () => new Worker('/worker.js', { type: 'module' }));
  await Promise.all(
    workers.map((w, i) => {
      const started = reply(w);
      w.postMessage({ kind: 'start', slab, control, id: i + 1 });
      return started;
    }),
  );
  const races = [];
  for (let round = 1; round <= RACES; round++) {
    const region = round % 2;
    const ready = workers.map(reply);
    for (const w of workers) w.postMessage({ kind: 'race', region, round });
    await Promise.all(ready);
    const done = workers.map(reply);
    Atomics.store(gate, 0, round);
    Atomics.notify(gate, 0);
    const results = await Promise.all(done);
    const winners = results.filter((r) => r.won);
    const bytes = new Uint8Array(slab, describeSharedSlab(slab).byteOffsets[region], 1024);
    const filled = winners.length === 1 && bytes.every((b) => b === winners[0].id);
    const released = winners.map((w) => reply(workers[w.id - 1]));
    for (const w of winners) workers[w.id - 1].postMessage({ kind: 'release' });
    await Promise.all(released);
    races.push({
      winners: winners.length,
      losers: results.filter((r) => !r.won).map((r) => r.code),
      filled,
      freed: !describeSharedSlab(slab).claimed[region],
    });
  }
  for (const w of workers) w.terminate();
  return { crossOriginIsolated: globalThis.crossOriginIsolated, races };
}

run().then(
  (result) => {
    globalThis.__result = result;
  },
  (error) => {
    globalThis.__result = { error: String(error?.stack ?? error) };
  },
);
