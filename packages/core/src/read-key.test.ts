import { expect, test } from 'vitest';
import { readKey } from './read-key.js';

test('reads what a keyed load reads: own and inherited properties, getters run, absent keys undefined', () => {
  const base = { inherited: 1 };
  const object = Object.create(base, {
    own: { value: 2, enumerable: true },
    hidden: { value: 3, enumerable: false },
    computed: { get: () => 4, enumerable: true },
  }) as Record<string, unknown>;
  expect(readKey(object, 'own')).toBe(2);
  expect(readKey(object, 'hidden')).toBe(3);
  expect(readKey(object, 'inherited')).toBe(1);
  expect(readKey(object, 'computed')).toBe(4);
  expect(readKey(object, 'absent')).toBeUndefined();
  for (const key of ['own', 'hidden', 'inherited', 'computed', 'absent']) expect(readKey(object, key)).toBe(object[key]);
});
