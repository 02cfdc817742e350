// Run by inlining.test.ts in a process of its own, under --print-bytecode: calls each function whose
// size the test checks once, so that V8 compiles it to bytecode and prints it.

import { alloc, Similar } from '@pol/core';
import { internDim } from '@pol/core/backend';

alloc(Similar(new Float32Array(1)), 'float32', 4);
internDim(5);
