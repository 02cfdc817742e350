import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const probe = fileURLToPath(new URL('./test-support/tiers-probe.mjs', import.meta.url));

// The steady calls users make (alloc in its forms, scratchspace in both forms, a verb) allocate nothing in any
// of V8's tiers, not only once the optimizing compiler has taken their loop in: with the loop warm
// but not optimized (default flags, a short warm-up), and with the optimizing compiler off
// (--no-opt: the interpreter, Sparkplug and, on Node.js 22 and later, Maglev). Functions that read
// `arguments` made an object on every such call: 56 to 136 bytes, measured with this probe.
test.each([
  ['default flags, a short warm-up', []],
  ['the optimizing compiler off (--no-opt)', ['--no-opt']],
])('steady calls allocate nothing below the optimizing compiler: %s', (_, flags) => {
  const result = spawnSync(process.execPath, ['--expose-gc', ...flags, probe], { encoding: 'utf8', timeout: 60_000 });
  expect(result.status, result.stderr).toBe(0);
  const perCall = JSON.parse(result.stdout) as Record<string, number>;
  expect(Object.keys(perCall)).toHaveLength(6);
  for (const [call, bytes] of Object.entries(perCall)) expect(bytes, `${call}: bytes per call`).toBeLessThan(1);
});
