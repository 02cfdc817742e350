// A plain Node.js script, as a user writes one: a device from Dawn, an arena and an upload, then
// (if asked: `node exit-check.mjs capture readback`) a captured step replayed and a readback, and
// plenty of garbage, so that the garbage collector runs. Then the script simply ends, its device
// still alive. exit.test.ts runs it in a child process, several times, and checks that it exits
// cleanly. It keeps Dawn's GPU object on globalThis for the whole program (see @pol/webgpu's
// README, "Node.js (Dawn) notes"): Dawn aborts the process when that object is garbage-collected.
import { alloc } from '@pol/core';
import { capture, deviceArena, download, instrument, upload } from '@pol/webgpu';
import { create } from 'webgpu';

const asked = new Set(process.argv.slice(2));
globalThis.webgpu ??= create([]);
const adapter = await globalThis.webgpu.requestAdapter();
if (adapter === null) throw new Error('No WebGPU adapter: install chromium and libvulkan1 for SwiftShader.');
const device = instrument(await adapter.requestDevice({ label: 'exit check' }));

const x = alloc(deviceArena(device, 1 << 16), 'float32', [256]);
const y = alloc(deviceArena(device, 1 << 16), 'float32', [256]);
upload(x, new Float32Array(256).fill(3));
if (asked.has('capture')) {
  const graph = await capture(device, () => {
    const encoder = device.createCommandEncoder();
    encoder.copyBufferToBuffer(x.buffer, x.offset, y.buffer, y.offset, y.size);
    device.queue.submit([encoder.finish()]);
  });
  for (let i = 0; i < 100; i++) graph.replay();
}
if (asked.has('readback')) {
  const back = await download(asked.has('capture') ? y : x);
  if (back.data[255] !== 3) throw new Error(`expected 3, got ${back.data[255]}`);
}

// Garbage, and collections, with the device alive: what crashed a script whose GPU object was a
// top-level const that nothing else referred to.
let junk = [];
for (let i = 0; i < 2_000_000; i++) junk.push({ i });
junk = [];
globalThis.gc?.();
await new Promise((resolve) => setTimeout(resolve, 20));
console.log(`exit check (${[...asked].join(', ') || 'plain'}): done, the device still alive`);
