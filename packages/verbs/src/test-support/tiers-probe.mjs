// Run by tiers.test.ts in a process of its own (node --expose-gc [flags] tiers-probe.mjs): the
// steady calls users make, each in a plain loop after a short warm-up (a loop that has not reached
// V8's optimizing compiler yet), and the bytes each call allocates, printed as JSON.

import { getHeapSpaceStatistics } from 'node:v8';
import { Arena, mark, retract } from '@pol/arena';
import { alloc, describe, scratchspace, Undef } from '@pol/core';
import { Allocating } from '@pol/verbs';

const WARM = 2_000;
const CALLS = 10_000;
const arena = new Arena(new ArrayBuffer(1 << 20));
const x = arena.alloc('float32', [16]);
const start = mark(arena);
const dims = [16];
const verb = Allocating(
  describe(
    function noop(out, _x) {
      return out;
    },
    { outputs: (x) => ({ y: Undef('float32', x.dims) }) },
  ),
);
const inFrame = (frame) => alloc(frame, 'float32', 16);

const loops = {
  nothing: (k) => {
    for (let i = 0; i < k; i++);
  },
  'alloc(arena, dtype, n)': (k) => {
    for (let i = 0; i < k; i++) {
      alloc(arena, 'float32', 16);
      arena.retract(start);
    }
  },
  'alloc(arena, dtype, dims)': (k) => {
    for (let i = 0; i < k; i++) {
      alloc(arena, 'float32', dims);
      arena.retract(start);
    }
  },
  'alloc(arena, dtype, rows, cols)': (k) => {
    for (let i = 0; i < k; i++) {
      alloc(arena, 'float32', 4, 4);
      arena.retract(start);
    }
  },
  'scratchspace(arena, f)': (k) => {
    for (let i = 0; i < k; i++) scratchspace(arena, inFrame);
  },
  'scratchspace(arena) and close()': (k) => {
    for (let i = 0; i < k; i++) {
      const frame = scratchspace(arena);
      alloc(frame, 'float32', 16);
      frame.close();
    }
  },
  'verb(arena, x) and retract': (k) => {
    for (let i = 0; i < k; i++) {
      verb(arena, x);
      retract(arena, start);
    }
  },
};

// What the new space holds: where a call's short-lived objects go (and nothing of V8's compiled
// code or feedback, which a loop that tiers up makes while it is measured).
function youngBytes() {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_used_size;
  throw new Error('no new_space in v8.getHeapSpaceStatistics()');
}

const bytes = {};
for (const [name, loop] of Object.entries(loops)) {
  loop(WARM);
  const seen = [];
  for (let t = 0; t < 5; t++) {
    globalThis.gc();
    const before = youngBytes();
    loop(CALLS);
    seen.push(youngBytes() - before);
  }
  seen.sort((a, b) => a - b);
  bytes[name] = seen[2];
}
const base = bytes.nothing;
const perCall = {};
for (const [name, b] of Object.entries(bytes)) if (name !== 'nothing') perCall[name] = Math.max(0, b - base) / CALLS;
console.log(JSON.stringify(perCall));
