import { describe, expect, it } from 'vitest';
import { readOptions } from './backend.js';
import { InvalidArgumentError } from './index.js';

const call = 'new Thing(slab, options)';

function messageOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return (e as Error).message;
  }
  throw new Error('expected a throw');
}

describe('readOptions', () => {
  it('returns the options object itself, without a copy', () => {
    const options = { alignment: 64, checked: true };
    const read = readOptions(call, options, ['alignment', 'checked', 'storage']);
    expect(read).toBe(options);
    expect(read.alignment).toBe(64);
    expect(read.storage).toBeUndefined();
  });

  it('reads undefined as no options, every key undefined', () => {
    const read = readOptions(call, undefined, ['alignment']);
    expect(read.alignment).toBeUndefined();
    expect(Object.keys(read)).toEqual([]);
    expect(Object.isFrozen(read)).toBe(true);
  });

  it('accepts an empty object, a null-prototype object, and inherited keys it does not own', () => {
    expect(readOptions(call, {}, ['a'])).toEqual({});
    const bare = Object.assign(Object.create(null) as object, { a: 1 });
    expect(readOptions(call, bare, ['a'])).toBe(bare);
    const inherited = Object.create({ stray: 1 }) as object;
    expect(readOptions(call, inherited, ['a'])).toBe(inherited);
  });

  it('refuses an unknown key, naming the call, the key and every known key', () => {
    const message = messageOf(() => readOptions(call, { alignment: 1, colour: 'red' }, ['alignment', 'checked', 'storage']));
    expect(message).toBe(
      "new Thing(slab, options) has no option 'colour'. Its options are 'alignment', 'checked' and 'storage'.",
    );
  });

  it('points out a key that differs from a known one only in case', () => {
    const message = messageOf(() => readOptions(call, { Checked: true }, ['alignment', 'checked']));
    expect(message).toContain("(did you mean 'checked'?)");
  });

  it('says so when the call takes no options at all', () => {
    expect(messageOf(() => readOptions(call, { a: 1 }, []))).toBe(
      "new Thing(slab, options) has no option 'a': it takes no options. Leave the options out.",
    );
    expect(messageOf(() => readOptions(call, 3, []))).toContain('It takes no options');
  });

  it('refuses options that are not an object, naming what it got and the known keys', () => {
    for (const bad of [null, 0, 'checked', true, [1, 2], new Float32Array(2), 5n]) {
      const message = messageOf(() => readOptions(call, bad, ['label']));
      expect(message).toContain(`${call} takes an options object, got `);
      expect(message).toContain("Its options are 'label'");
    }
    expect(messageOf(() => readOptions(call, [1], ['label']))).toContain('got an array of length 1');
  });

  it('changes nothing in the options it refuses', () => {
    const options = { alignment: 8, nope: 1 };
    expect(() => readOptions(call, options, ['alignment'])).toThrow(InvalidArgumentError);
    expect(options).toEqual({ alignment: 8, nope: 1 });
  });
});
