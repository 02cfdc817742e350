import type { DType } from '@pol/core';
import { alloc, scratchspace } from '@pol/core';
import { describe, expectTypeOf, test } from 'vitest';
import { defineStorage, type SlabStorage } from './backend.js';
import { Arena, carve, type SlabKind } from './index.js';

// How a backend (such as @pol/webgpu) plugs a kind of its own into both registries: core's
// ArrayTypes (what its spaces hand out) and SlabTypes (what its slabs are), by augmentation.
interface FakeGpuBuffer {
  readonly label: 'fake-gpu-buffer';
  readonly size: number;
}
interface FakeGpuArray<D extends DType> {
  readonly dtype: D;
  readonly dims: readonly number[];
  readonly buffer: FakeGpuBuffer;
  readonly offset: number;
}

declare module '@pol/core' {
  interface ArrayTypes<D extends DType> {
    fakegpu: FakeGpuArray<D>;
  }
}
declare module './backend.js' {
  interface SlabTypes {
    fakegpu: FakeGpuBuffer;
  }
}

declare const storage: SlabStorage<FakeGpuBuffer, 'fakegpu'>;
declare const buffer: FakeGpuBuffer;

describe('a storage of another kind', () => {
  test('SlabStorage is typed by slab and kind; defineStorage takes it', () => {
    expectTypeOf(defineStorage(storage)).toEqualTypeOf<void>();
    expectTypeOf(storage.carve(buffer, 0, 'float32', [4])).toEqualTypeOf<FakeGpuArray<'float32'>>();
    expectTypeOf<SlabKind<FakeGpuBuffer>>().toEqualTypeOf<'fakegpu'>();
    expectTypeOf<SlabKind<ArrayBuffer>>().toEqualTypeOf<'host'>();
  });

  test('attach receives the slab, the arena of the storage’s kind, and forget', () => {
    type Attach = NonNullable<SlabStorage<FakeGpuBuffer, 'fakegpu'>['attach']>;
    expectTypeOf<Parameters<Attach>>().toEqualTypeOf<[slab: FakeGpuBuffer, arena: Arena<'fakegpu'>, forget: () => void]>();
    expectTypeOf<ReturnType<Attach>>().toEqualTypeOf<void>();
  });

  test('new Arena over its slab is an Arena of its kind, and alloc gives its arrays', () => {
    const arena = new Arena(buffer, { alignment: 256 });
    expectTypeOf(arena).toEqualTypeOf<Arena<'fakegpu'>>();
    expectTypeOf(alloc(arena, 'float32', 4)).toEqualTypeOf<FakeGpuArray<'float32'>>();
    scratchspace(arena, (frame) => {
      expectTypeOf(alloc(frame, 'int32', 2)).toEqualTypeOf<FakeGpuArray<'int32'>>();
    });
    expectTypeOf(carve(buffer, 0, 'uint8', [1])).toEqualTypeOf<FakeGpuArray<'uint8'>>();
  });

  test('an explicit storage option types a slab no SlabTypes entry declares', () => {
    class Other {
      readonly other = true;
    }
    const otherStorage = {} as SlabStorage<Other, 'fakegpu'>;
    expectTypeOf(new Arena(new Other(), { storage: otherStorage })).toEqualTypeOf<Arena<'fakegpu'>>();
    // @ts-expect-error without the storage option, Other is not a slab
    new Arena(new Other());
  });
});
