import { describe, expect, it } from 'vitest';
import {
  type ArrayFamily,
  familyKey,
  openFrame,
  openFrameKey,
  rollbackKey,
  savepointKey,
  scopeFrame,
  spaceKey,
} from './backend.js';
import {
  alloc,
  ambientspace,
  type DType,
  type Frame,
  FrameClosedError,
  type HostArray,
  InvalidArgumentError,
  InvalidShapeError,
  InvalidSpecError,
  isFrame,
  NoAmbientSpaceError,
  NotASpaceError,
  type PolArray,
  type PolError,
  Similar,
  type Space,
  scratch,
  scratchspace,
  Undef,
  UnknownDTypeError,
  withspace,
} from './index.js';
import { countingSpace, deferred, fakeFamily, InjectedFailure, macrotask, transactionalSpace } from './test-support/fixtures.js';

const host = Similar(new Float32Array(0));

/** A host space whose frames are counted, so a test can prove none was opened. */
function frameCountingSpace(): Space<'host'> & { opened: number } {
  const base = countingSpace();
  const space: Space<'host'> & { opened: number } = {
    [spaceKey]: 'host',
    opened: 0,
    alloc: (dtype, dims) => base.alloc(dtype, dims),
    [openFrameKey]() {
      space.opened++;
      return scopeFrame(space);
    },
  };
  return space;
}

describe('scratchspace(space, f), synchronous', () => {
  it('opens a frame on space, passes it to f, closes it after, and returns what f returns', () => {
    let seen: Frame | undefined;
    const result = scratchspace(host, (frame) => {
      seen = frame;
      expect(isFrame(frame)).toBe(true);
      expect(frame.isOpen).toBe(true);
      expect(frame.parent).toBe(host);
      expect(frame[spaceKey]).toBe('host');
      const tmp = alloc(frame, 'float32', 3);
      tmp.data.set([1, 2, 3]);
      return tmp.data.reduce((a, b) => a + b, 0);
    });
    expect(result).toBe(6);
    expect(seen?.isOpen).toBe(false);
  });

  it('makes the frame the ambient space inside, and restores the outer binding after', () => {
    const outer = countingSpace();
    withspace(outer, () => {
      scratchspace(host, (frame) => {
        expect(ambientspace()).toBe(frame);
      });
      expect(ambientspace()).toBe(outer);
    });
  });

  it('closes the frame when f throws, and rethrows f’s error', () => {
    let seen: Frame | undefined;
    const boom = new Error('boom');
    expect(() =>
      scratchspace(host, (frame) => {
        seen = frame;
        throw boom;
      }),
    ).toThrow(boom);
    expect(seen?.isOpen).toBe(false);
  });

  it('nests: the inner frame’s parent is the outer frame, the ambient space is the innermost open frame', () => {
    scratchspace(host, (outer) => {
      scratchspace(outer, (inner) => {
        expect(inner.parent).toBe(outer);
        expect(ambientspace()).toBe(inner);
        scratchspace((innermost) => {
          expect(innermost.parent).toBe(inner);
          expect(ambientspace()).toBe(innermost);
        });
        expect(ambientspace()).toBe(inner);
      });
      expect(outer.isOpen).toBe(true);
      expect(ambientspace()).toBe(outer);
    });
  });

  it('opens a frame through the space’s own protocol when it has one', () => {
    const space = frameCountingSpace();
    scratchspace(space, (frame) => {
      expect(frame.parent).toBe(space);
    });
    expect(space.opened).toBe(1);
  });
});

describe('scratchspace(space, f), asynchronous', () => {
  it('keeps the frame open across await and closes it once the promise settles', async () => {
    const gate = deferred();
    let seen: Frame | undefined;
    const done = scratchspace(host, async (frame) => {
      seen = frame;
      await gate.promise;
      expect(ambientspace()).toBe(frame);
      alloc('float32', 2);
      return 'value';
    });
    await macrotask();
    expect(seen?.isOpen).toBe(true);
    gate.resolve();
    expect(await done).toBe('value');
    expect(seen?.isOpen).toBe(false);
  });

  it('closes the frame on rejection, and rejects with f’s error', async () => {
    const gate = deferred();
    let seen: Frame | undefined;
    const failure = new Error('async boom');
    const done = scratchspace(host, async (frame) => {
      seen = frame;
      await gate.promise;
      throw failure;
    });
    await macrotask();
    expect(seen?.isOpen).toBe(true);
    gate.resolve();
    await expect(done).rejects.toBe(failure);
    expect(seen?.isOpen).toBe(false);
  });

  it('gives concurrent async blocks each their own innermost frame', async () => {
    const gateA = deferred();
    const gateB = deferred();
    const frames: Frame[] = [];
    const seen: boolean[] = [];
    const task = (gate: Promise<void>) =>
      scratchspace(host, async (frame) => {
        frames.push(frame);
        await gate;
        seen.push(ambientspace() === frame);
      });
    const a = task(gateA.promise);
    const b = task(gateB.promise);
    gateB.resolve();
    await macrotask();
    gateA.resolve();
    await Promise.all([a, b]);
    expect(frames).toHaveLength(2);
    expect(frames[0]).not.toBe(frames[1]);
    expect(seen).toEqual([true, true]);
  });
});

describe('scratchspace(f), the ambient spelling', () => {
  it('opens a frame on the ambient space', () => {
    const space = frameCountingSpace();
    withspace(space, () => {
      scratchspace((frame) => {
        expect(frame.parent).toBe(space);
        expect(ambientspace()).toBe(frame);
      });
    });
    expect(space.opened).toBe(1);
  });

  it('throws NoAmbientSpaceError when nothing is bound, without running f', () => {
    let ran = false;
    expect(() =>
      scratchspace(() => {
        ran = true;
      }),
    ).toThrow(NoAmbientSpaceError);
    expect(ran).toBe(false);
  });
});

describe('using frame = scratchspace(space)', () => {
  it('closes at the end of the block', () => {
    let seen: Frame | undefined;
    {
      using frame = scratchspace(host);
      seen = frame;
      expect(frame.isOpen).toBe(true);
      expect(frame.parent).toBe(host);
      alloc(frame, 'int32', 2);
    }
    expect(seen?.isOpen).toBe(false);
  });

  it('closes when the block throws', () => {
    let seen: Frame | undefined;
    expect(() => {
      using frame = scratchspace(host);
      seen = frame;
      throw new Error('inside');
    }).toThrow('inside');
    expect(seen?.isOpen).toBe(false);
  });

  it('does not rebind the ambient space', () => {
    const outer = countingSpace();
    withspace(outer, () => {
      using frame = scratchspace(host);
      expect(ambientspace()).toBe(outer);
      expect(frame.isOpen).toBe(true);
    });
  });

  it('frames close by close() and by Symbol.dispose, and closing twice does nothing', () => {
    const frame = scratchspace(host);
    frame.close();
    expect(frame.isOpen).toBe(false);
    frame.close();
    frame[Symbol.dispose]();
    expect(frame.isOpen).toBe(false);
    const other = scratchspace(host);
    other[Symbol.dispose]();
    expect(other.isOpen).toBe(false);
  });
});

describe('a frame after it closed', () => {
  it('refuses to allocate, with FrameClosedError saying what to do', () => {
    const frame = scratchspace(host, (f) => f);
    expect(() => alloc(frame, 'float32', 3)).toThrow(FrameClosedError);
    expect(() => frame.alloc('float32', [3])).toThrow(
      /Cannot allocate float32\[3\]: Frame\(on Similar\(float32\[0\] on host\), closed\) has closed/,
    );
    expect(() => alloc(frame, 'float32', 3)).toThrow(/Allocate from a frame only inside its scratchspace block/);
    expect(() => alloc(frame, { a: Undef('int8', 1) })).toThrow(FrameClosedError);
    try {
      alloc(frame, Undef('int8', 1));
      expect.unreachable();
    } catch (error) {
      expect((error as PolError).code).toBe('POL_FRAME_CLOSED');
      expect((error as PolError).name).toBe('FrameClosedError');
    }
  });

  it('refuses to open a nested frame, in every spelling, without running the callback', () => {
    const frame = scratchspace(host, (f) => f);
    let ran = false;
    expect(() =>
      scratchspace(frame, () => {
        ran = true;
      }),
    ).toThrow(FrameClosedError);
    expect(() => scratchspace(frame)).toThrow(/Cannot open a nested frame/);
    expect(() => scopeFrame(frame)).toThrow(FrameClosedError);
    expect(() =>
      withspace(frame, () =>
        scratchspace(() => {
          ran = true;
        }),
      ),
    ).toThrow(FrameClosedError);
    expect(ran).toBe(false);
  });

  it('refuses scratch materialization', () => {
    const kernel = (_o: object, _x: Float32Array): void => {};
    scratch.define(kernel, (x: Float32Array) => ({ tmp: Undef(x) }));
    const frame = scratchspace(host, (f) => f);
    expect(() => scratch(frame, kernel, new Float32Array(2))).toThrow(FrameClosedError);
  });
});

describe('bad input through an open frame', () => {
  it('leaves the frame open, usable, and holding only what it held', () => {
    const fake = fakeFamily();
    scratchspace(Similar(fake.array('float32', [1])), (frame) => {
      const kept = alloc(frame, 'float32', 1);
      expect(() => alloc(frame, 'float32', -1)).toThrow(InvalidShapeError);
      expect(() => alloc(frame, 'complex64' as DType, 1)).toThrow(UnknownDTypeError);
      expect(() => alloc(frame, { layers: { w: 5 } } as never)).toThrow(InvalidSpecError);
      expect(() => scratch(frame, 3 as never)).toThrow(InvalidArgumentError);
      expect(() => scratchspace(frame, 3 as never)).toThrow(InvalidArgumentError);
      expect(frame.isOpen).toBe(true);
      expect(ambientspace()).toBe(frame);
      expect(fake.allocated).toEqual([kept]);
    });
    expect(fake.released).toHaveLength(1);
    expect(fake.released[0]).toHaveLength(1);
  });
});

describe('scratchspace bad input', () => {
  it('refuses a callback that is not a function with InvalidArgumentError, opening nothing', () => {
    const space = frameCountingSpace();
    for (const bad of [42, 'f', {}, null]) {
      expect(() => scratchspace(space, bad as unknown as () => void)).toThrow(InvalidArgumentError);
    }
    expect(() => scratchspace(space, {} as unknown as () => void)).toThrow(
      /scratchspace\(space, f\) needs a callback f, got a plain object\. Pass \(frame\) => \{ \.\.\. \}/,
    );
    expect(space.opened).toBe(0);
  });

  it('takes a callback passed as undefined for none: scratchspace(space, undefined) is scratchspace(space)', () => {
    const space = frameCountingSpace();
    const frame = scratchspace(space, undefined as unknown as () => void) as unknown as Frame;
    expect(space.opened).toBe(1);
    frame.close();
  });

  it('refuses something that is not a space with NotASpaceError, without running f', () => {
    let ran = false;
    for (const bad of [{}, new Float32Array(1), null, 'host']) {
      expect(() =>
        scratchspace(bad as unknown as Space, () => {
          ran = true;
        }),
      ).toThrow(NotASpaceError);
      expect(() => scratchspace(bad as unknown as Space)).toThrow(/scratchspace needs a space/);
    }
    expect(() => scratchspace({} as Space, 3 as unknown as () => void)).toThrow(NotASpaceError);
    expect(ran).toBe(false);
  });
});

describe('scopeFrame', () => {
  it('scopes lifetimes over any space, handing what it allocated to release when it closes', () => {
    const space = countingSpace();
    const released: (readonly PolArray[])[] = [];
    const frame = scopeFrame(space, (arrays) => released.push(arrays));
    expect(frame.parent).toBe(space);
    const a = alloc(frame, 'float32', 2);
    const b = alloc(frame, Undef('int8', 3));
    expect(space.calls).toHaveLength(2);
    expect(released).toEqual([]);
    frame.close();
    expect(released).toHaveLength(1);
    expect(released[0]).toHaveLength(2);
    expect(released[0]?.[0]).toBe(a);
    expect(released[0]?.[1]).toBe(b);
    frame.close();
    expect(released).toHaveLength(1);
  });

  it('without release, only scopes', () => {
    const frame = scopeFrame(countingSpace());
    alloc(frame, 'float32', 1);
    frame.close();
    expect(frame.isOpen).toBe(false);
  });

  it('prints itself', () => {
    const frame = scopeFrame(host);
    expect(String(frame)).toBe('Frame(on Similar(float32[0] on host), open)');
    frame.close();
    expect(String(frame)).toBe('Frame(on Similar(float32[0] on host), closed)');
  });

  it('refuses a non-space with NotASpaceError, and a release that is not a function with InvalidArgumentError', () => {
    expect(() => scopeFrame({} as Space)).toThrow(NotASpaceError);
    expect(() => scopeFrame(host, 42 as unknown as () => void)).toThrow(InvalidArgumentError);
    expect(() => scopeFrame(host, 42 as unknown as () => void)).toThrow(/Omit it for GC memory/);
  });
});

describe('openFrame (scratchspace without its argument checks)', () => {
  it('opens a scope frame on a space without a frame protocol, as scratchspace(space) does', () => {
    const space = countingSpace();
    const frame = openFrame(space);
    expect(isFrame(frame)).toBe(true);
    expect(frame.parent).toBe(space);
    alloc(frame, 'float32', 2);
    expect(space.calls).toHaveLength(1);
    frame.close();
    expect(frame.isOpen).toBe(false);
    expect(() => alloc(frame, 'float32', 1)).toThrow(FrameClosedError);
  });

  it("opens through a space's own protocol when it has one", () => {
    const opened: Frame[] = [];
    const inner = scopeFrame(host);
    const space: Space<'host'> = {
      [spaceKey]: 'host',
      alloc: (dtype, dims) => host.alloc(dtype, dims),
      [openFrameKey]: () => {
        opened.push(inner);
        return inner;
      },
    };
    expect(openFrame(space)).toBe(inner);
    expect(opened).toEqual([inner]);
    inner.close();
  });

  it('nests on an open frame, and refuses a closed one with FrameClosedError, opening nothing', () => {
    const space = countingSpace();
    const outer = openFrame(space);
    const nested = openFrame(outer);
    expect(nested.parent).toBe(outer);
    nested.close();
    outer.close();
    expect(() => openFrame(outer)).toThrow(FrameClosedError);
    expect(() => openFrame(outer)).toThrow(/has closed/);
    expect(space.calls).toHaveLength(0);
  });
});

describe('frames on Similar of a family with release', () => {
  it('release gets exactly the arrays allocated through that frame, once, when it closes', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [4]));
    const unframed = alloc(space, 'float32', 1);
    let inside: PolArray[] = [];
    scratchspace(space, (frame) => {
      const a = alloc(frame, 'float32', 2);
      const b = alloc(frame, Undef('int32', [3]));
      const { c, nested } = alloc(frame, { c: Undef('uint8', 4), nested: { d: Undef('float64', 1) }, kept: unframed });
      const e = alloc('int16', 5); // the ambient spelling allocates through the frame too
      inside = [a, b, c, nested.d, e];
      expect(fake.released).toEqual([]);
    });
    expect(fake.released).toHaveLength(1);
    expect(fake.released[0]).toHaveLength(inside.length);
    inside.forEach((array, i) => {
      expect(fake.released[0]?.[i]).toBe(array);
    });
    expect(fake.released[0]).not.toContain(unframed);
  });

  it('nested frames release their own arrays, inner first', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [4]));
    let outerArray: PolArray | undefined;
    let innerArray: PolArray | undefined;
    scratchspace(space, (outer) => {
      outerArray = alloc(outer, 'float32', 1);
      scratchspace(outer, (inner) => {
        innerArray = alloc(inner, 'float32', 2);
      });
      expect(fake.released).toHaveLength(1);
      expect(fake.released[0]).toEqual([innerArray]);
    });
    expect(fake.released).toHaveLength(2);
    expect(fake.released[1]).toHaveLength(1);
    expect(fake.released[1]?.[0]).toBe(outerArray);
  });

  it('a frame that allocated nothing releases nothing', () => {
    const fake = fakeFamily();
    scratchspace(Similar(fake.array('int8', [1])), () => {});
    expect(fake.released).toEqual([]);
  });

  it('releases on throw and on rejection too', async () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('int8', [1]));
    expect(() =>
      scratchspace(space, (frame) => {
        alloc(frame, 'int8', 1);
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(fake.released).toHaveLength(1);
    await expect(
      scratchspace(space, async (frame) => {
        alloc(frame, 'int8', 1);
        await macrotask();
        alloc(frame, 'int8', 2);
        throw new Error('async boom');
      }),
    ).rejects.toThrow('async boom');
    expect(fake.released).toHaveLength(2);
    expect(fake.released[1]).toHaveLength(2);
  });

  it('a spec failing part-way through such a frame releases the partial arrays at once; the frame stays usable', () => {
    const fake = fakeFamily();
    const space = Similar(fake.array('float32', [4]));
    scratchspace(space, (frame) => {
      const before = alloc(frame, 'float32', 1);
      fake.failOnFirstDim = 13;
      expect(() =>
        alloc(frame, { a: Undef('float32', 2), group: { b: Undef('int8', 3), c: Undef('float32', 13) }, d: Undef('float32', 4) }),
      ).toThrow(InjectedFailure);
      // a and b were allocated before c failed: both handed back right away, nothing else.
      expect(fake.released).toHaveLength(1);
      expect(fake.released[0]?.map((x) => x.dims)).toEqual([[2], [3]]);
      fake.failOnFirstDim = undefined;
      const after = alloc(frame, 'float32', 5);
      expect(frame.isOpen).toBe(true);
      return [before, after];
    });
    expect(fake.released).toHaveLength(2);
    expect(fake.released[1]?.map((x) => x.dims)).toEqual([[1], [5]]);
  });

  it('an invalid spec through such a frame allocates nothing and releases nothing', () => {
    const fake = fakeFamily();
    scratchspace(Similar(fake.array('float32', [4])), (frame) => {
      expect(() => alloc(frame, { a: Undef('float32', 2), b: { c: 3 } } as never)).toThrow(InvalidSpecError);
    });
    expect(fake.allocated).toEqual([]);
    expect(fake.released).toEqual([]);
  });

  it('the callback’s error wins over a failing release, which rides along as suppressed', () => {
    const fake = fakeFamily();
    const releaseError = new Error('release failed');
    const family: ArrayFamily<'host'> = {
      ...fake.family,
      release: () => {
        throw releaseError;
      },
    };
    const exemplar: HostArray<'float32'> = { ...fake.array('float32', [1]), [familyKey]: family };
    const failure = new Error('callback failed');
    try {
      scratchspace(Similar(exemplar), (frame) => {
        alloc(frame, 'float32', 1);
        throw failure;
      });
      expect.unreachable();
    } catch (error) {
      expect(error).toBe(failure);
      expect((error as { suppressed?: unknown }).suppressed).toBe(releaseError);
    }
    expect(() => scratchspace(Similar(exemplar), (frame) => alloc(frame, 'float32', 1))).toThrow(releaseError);
  });
});

describe('a frame over a space with a savepoint protocol', () => {
  it('rolls back the space itself when a spec fails part-way through the frame', () => {
    const space = transactionalSpace();
    scratchspace(space, (frame) => {
      alloc(frame, 'float32', 1);
      expect(space.live).toHaveLength(1);
      space.failAt(3);
      expect(() => alloc(frame, { a: Undef('int8', 1), b: Undef('int8', 2), c: Undef('int8', 3) })).toThrow(InjectedFailure);
      expect(space.live).toHaveLength(1);
      expect(space.rollbacks).toEqual([1]);
    });
  });
});

describe('a scope frame’s savepoints, in each combination of release and a transactional root', () => {
  it('rolls back what it tracks and what the root holds, whichever of the two there is', () => {
    for (const withRelease of [false, true]) {
      for (const transactional of [false, true]) {
        const root = transactional ? transactionalSpace() : countingSpace();
        const released: (readonly PolArray[])[] = [];
        const frame = scopeFrame(root, withRelease ? (arrays) => released.push(arrays) : undefined);
        alloc(frame, 'int8', 1);
        const failing: Space<'host'> = {
          [spaceKey]: 'host',
          alloc: (dtype, dims) => {
            if (dims[0] === 9) throw new InjectedFailure('no room');
            return frame.alloc(dtype, dims);
          },
          [savepointKey]: () => frame[savepointKey]?.(),
          [rollbackKey]: (token) => frame[rollbackKey]?.(token),
        };
        const label = `release ${withRelease}, transactional ${transactional}`;
        expect(() => alloc(failing, { a: Undef('int8', 2), b: Undef('int8', 9) }), label).toThrow(InjectedFailure);
        if (withRelease)
          expect(
            released.map((r) => r.length),
            label,
          ).toEqual([1]);
        if (transactional) expect((root as ReturnType<typeof transactionalSpace>).live, label).toHaveLength(1);
        frame.close();
        if (withRelease)
          expect(
            released.map((r) => r.length),
            label,
          ).toEqual([1, 1]);
      }
    }
  });
});
