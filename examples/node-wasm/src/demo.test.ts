import { expect, test } from 'vitest';
import { demo } from './demo.js';

test('the demo says what it did: three sizes that match the reference, a steady loop with no malloc and no garbage', async () => {
  const lines = await demo();
  const text = lines.join('\n');
  expect(text).toMatch(/^region: [\d,]+ bytes at byte [\d,]+ of the module's memory, from 1 _malloc at start-up/m);
  for (const n of ['256', '4,096', '65,536']) expect(text).toMatch(new RegExp(`^ *${n} .* match$`, 'm'));
  expect(text).not.toMatch(/MISMATCH/);
  expect(text).toContain('_malloc calls: 0, _free calls: 0; bytes written outside the region: 0');
  expect(text).toMatch(/new arrays: 0 .* unchanged, exactly the region/);
  const bytes = /JavaScript bytes allocated per call: ([\d.]+) at the worst size/.exec(text);
  expect(bytes, text).not.toBeNull();
  // On every line: the loop is warmed up across a full collection first (see steadyLoop).
  expect(Number(bytes?.[1])).toBe(0);
});
