/**
 * The public surface, pinned: every entry point of every published package (each key of its
 * `exports` map), with the names it exports at run time (`Object.keys` of the built module) and the
 * names only its types export (from the `.d.ts` files its `types` conditions name). A name added to
 * or removed from an entry fails here until the list below is changed by hand: a new export is a
 * decision (documented, with a changeset), and a removed one a breaking change. And each name is
 * exported by one entry only, but for the examples pair below.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { publishedPackages, root } from './workspace.js';

interface Surface {
  /** The runtime exports, sorted. */
  readonly values: readonly string[];
  /** The type-only exports (interfaces, type aliases), sorted. A name that is both is a value. */
  readonly types: readonly string[];
}

const pinned: Record<string, Surface> = {
  '@pol/core': {
    values: [
      'AsyncScopeUnsupportedError',
      'CaptureViolation',
      'FrameClosedError',
      'InvalidArgumentError',
      'InvalidDescriptionError',
      'InvalidShapeError',
      'InvalidSpecError',
      'NoAmbientSpaceError',
      'NotAFrameError',
      'NotASpaceError',
      'NotAnArrayError',
      'PolError',
      'Similar',
      'Undef',
      'UnknownDTypeError',
      'ZeroUnsupportedError',
      'alloc',
      'ambientIsAsync',
      'ambientspace',
      'byteLength',
      'capturing',
      'checkSpec',
      'checkpoints',
      'describe',
      'dtypeInfo',
      'dtypeOfTypedArray',
      'dtypes',
      'elementCount',
      'hasDType',
      'hostArray',
      'isArray',
      'isFrame',
      'isSpace',
      'isUndef',
      'materialize',
      'outputs',
      'scratch',
      'scratchspace',
      'shapeOf',
      'withspace',
      'zeroArray',
      'zeroed',
    ],
    types: [
      'AnyArray',
      'AnyTypedArray',
      'ArrayOf',
      'ArrayTypes',
      'DType',
      'DTypeInfo',
      'DTypeOf',
      'DescribeArgs',
      'Described',
      'Describer',
      'DescriberOf',
      'DescriptionRegistry',
      'Descriptions',
      'Frame',
      'HostArray',
      'Kernel',
      'KernelArgs',
      'Kind',
      'KindOf',
      'Lifetime',
      'Materialize',
      'PolArray',
      'Space',
      'Spec',
      'SpecOf',
      'SpecProblem',
      'SpecValue',
      'TypedArrayByDType',
      'TypedArrayConstructorOf',
      'TypedArrayOf',
    ],
  },
  '@pol/core/backend': {
    values: [
      'allocLengthKey',
      'ambientBinder',
      'assertSpace',
      'attachSuppressed',
      'bindAmbient',
      'checkSupplied',
      'closeAfterFailure',
      'commit',
      'commitKey',
      'contextStore',
      'describeValue',
      'familyKey',
      'familyOf',
      'frameKey',
      'frozenDims',
      'hostFamily',
      'internDim',
      'internDims',
      'isAsyncFunction',
      'isPlainObject',
      'isPowerOfTwo',
      'isThenable',
      'keepAncestors',
      'lazyContextStore',
      'makeHostArray',
      'materializeInto',
      'noSavepoint',
      'openFrame',
      'openFrameKey',
      'passedCount',
      'readOptions',
      'rollback',
      'rollbackKey',
      'sameDims',
      'savepoint',
      'savepointKey',
      'scopeFrame',
      'setAmbientStore',
      'shapeText',
      'spaceKey',
      'syncStore',
      'takeAncestors',
      'valueText',
    ],
    types: ['AmbientBinder', 'AmbientStore', 'ArrayFamily', 'SuppliedProblem'],
  },
  '@pol/arena': {
    values: [
      'Arena',
      'ArenaFullError',
      'CarveRangeError',
      'ContendedError',
      'DisposedArenaError',
      'ForeignMarkError',
      'ForeignMemoryError',
      'FrameOrderError',
      'InvalidAlignmentError',
      'InvalidRegionError',
      'InvalidSlabError',
      'MarkAboveOffsetError',
      'MisalignedCarveError',
      'MissingRegionError',
      'NotAnArenaError',
      'RegionOverlapError',
      'StaleArrayError',
      'StaleMarkError',
      'carve',
      'claimRegion',
      'createSharedSlab',
      'describeSharedSlab',
      'freeRegion',
      'isArena',
      'mark',
      'observe',
      'pointer',
      'reset',
      'retract',
      'tryAlloc',
      'watermark',
    ],
    types: [
      'ArenaConstructor',
      'ArenaDescription',
      'ArenaEvent',
      'ArenaFrame',
      'ArenaListener',
      'ArenaOptions',
      'ArenaStorageOptions',
      'ClaimOptions',
      'Mark',
      'SharedSlabDescription',
      'SharedSlabLayout',
      'Slab',
      'SlabKind',
      'SlabOf',
      'WasmArenaOptions',
      'WasmMemory',
    ],
  },
  // What a storage extension (such as `@pol/webgpu`'s GPU buffers) needs, apart from what a user holds.
  '@pol/arena/backend': {
    values: ['POISON_BYTE', 'defineStorage'],
    types: ['ArrayLife', 'SlabStorage', 'SlabTypes'],
  },
  '@pol/verbs': {
    values: [
      'Allocating',
      'BareTypedArrayError',
      'BufferMismatchError',
      'DescriberContractError',
      'DescriptionConflictError',
      'ExtraInputError',
      'HostDataRequiredError',
      'KindMismatchError',
      'MisplacedSpaceError',
      'MissingInputError',
      'NoSpaceError',
      'NotAKernelError',
      'NotAPrimalError',
      'OutputsWrittenError',
      'ShadowMismatchError',
      'Shadows',
      'UndescribedKernelError',
      'VerbArgumentError',
      'outParameters',
      'shadowSpec',
      'walkShadows',
      'zeroShadows',
    ],
    types: [
      'AllocatingOptions',
      'DescribedNames',
      'KernelInputs',
      'KernelOptions',
      'KernelOutputs',
      'Leaves',
      'OutParameterDescriptions',
      'OutParametersKernel',
      'Primal',
      'Returning',
      'ShadowSpec',
      'ShadowsLike',
      'ShadowsOf',
      'Verb',
      'VerbArgs',
      'VerbOptions',
      'VerbResult',
      'VerbReturn',
    ],
  },
  '@pol/verbs/examples': {
    values: [
      'blobs',
      'initMlp',
      'linear',
      'linearBackward',
      'linearBackwardInto',
      'linearInto',
      'normal',
      'relu',
      'reluBackward',
      'reluBackwardInto',
      'reluInto',
      'rmsNorm',
      'rmsNormBackward',
      'rmsNormBackwardInto',
      'rmsNormInto',
      'rowCount',
      'rowLength',
      'rowsOf',
      'seededRandom',
      'softmax',
      'softmaxCrossEntropy',
      'softmaxCrossEntropyBackward',
      'softmaxCrossEntropyBackwardInto',
      'softmaxCrossEntropyInto',
      'softmaxInto',
      'train',
      'trainStep',
      'trainStepInto',
    ],
    types: ['F32', 'I32', 'Layer', 'Mlp'],
  },
  '@pol/webgpu': {
    values: [
      'CaptureFailedError',
      'DeviceLostError',
      'GpuAllocationError',
      'GpuLimitError',
      'GraphInvalidError',
      'PlacementError',
      'ReadbackError',
      'UsageConflictError',
      'bindGroup',
      'capture',
      'deviceArena',
      'deviceSlab',
      'download',
      'instrument',
      'isDeviceSlab',
      'isGpuArray',
      'placedArena',
      'planPlacement',
      'slabUsage',
      'upload',
      'uploadAll',
      'uploadBatch',
    ],
    types: [
      'CaptureOptions',
      'DeviceArenaOptions',
      'DeviceSlab',
      'DeviceSlabOptions',
      'GpuArray',
      'Graph',
      'GraphStats',
      'PlacedArena',
      'PlacedArenaOptions',
      'Placement',
      'PlacementOptions',
      'ReplayOptions',
      'UploadBatch',
    ],
  },
  '@pol/webgpu/examples': {
    values: [
      'GpuKernels',
      'destroyArenas',
      'kernelSources',
      'linear',
      'linearBackward',
      'linearBackwardInto',
      'linearInto',
      'modelArenas',
      'placeModel',
      'relu',
      'reluBackward',
      'reluBackwardInto',
      'reluInto',
      'softmaxCrossEntropy',
      'softmaxCrossEntropyBackward',
      'softmaxCrossEntropyBackwardInto',
      'softmaxCrossEntropyInto',
      'trainOnGpu',
      'trainStep',
      'trainStepInto',
      'wgslOf',
    ],
    types: [
      'BindingAccess',
      'CapturedRun',
      'DispatchRecord',
      'GpuF32',
      'GpuI32',
      'GpuLayer',
      'GpuMlp',
      'GpuModel',
      'KernelName',
      'KernelSource',
      'ModelArenas',
      'TrainOptions',
      'TrainResult',
    ],
  },
};

/**
 * The names two entries share, by decision. `@pol/webgpu/examples` is `@pol/verbs/examples`'s
 * perceptron on a GPU: its layers and its training step are other objects (WGSL verbs over
 * `GpuArray`s) under the same names, so that the two examples read side by side. They are sample
 * models in separate packages' `examples` subpaths, not library vocabulary; a program that uses
 * both renames one on import.
 */
const shared: Record<string, readonly string[]> = {
  '@pol/verbs/examples ~ @pol/webgpu/examples': [
    'linear',
    'linearBackward',
    'linearBackwardInto',
    'linearInto',
    'relu',
    'reluBackward',
    'reluBackwardInto',
    'reluInto',
    'softmaxCrossEntropy',
    'softmaxCrossEntropyBackward',
    'softmaxCrossEntropyBackwardInto',
    'softmaxCrossEntropyInto',
    'trainStep',
    'trainStepInto',
  ],
};

const thisFile = 'tools/packaging/src/exports.test.ts';

/** Every name a `.d.ts` file exports, following `export * from './x.js'` into its sibling file. */
function declaredNames(file: string): string[] {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  const names = new Set<string>();
  for (const m of text.matchAll(/^\s*export\s+\*\s+(?:as\s+([\w$]+)\s+)?from\s+['"]([^'"]+)['"]/gm)) {
    const [, alias, specifier = ''] = m;
    if (alias !== undefined) names.add(alias);
    else if (specifier.startsWith('.'))
      for (const n of declaredNames(join(dirname(file), specifier.replace(/\.js$/, '.d.ts')))) names.add(n);
    else throw new Error(`${file}: export * from '${specifier}' re-exports another package's names, which cannot be pinned here`);
  }
  for (const m of text.matchAll(/^\s*export\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    for (const part of (m[1] ?? '').split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop();
      if (name) names.add(name);
    }
  }
  const declaration =
    /^\s*export\s+(?:declare\s+)?(?:abstract\s+)?(?:const|let|var|function|class|interface|type|enum|namespace)\s+([\w$]+)/gm;
  for (const m of text.matchAll(declaration)) names.add(m[1] as string);
  if (/^\s*export\s+default\b/m.test(text)) names.add('default');
  return [...names].sort();
}

interface Entry {
  /** What a user imports: `@pol/core`, `@pol/core/backend`. */
  readonly specifier: string;
  /** The `.d.ts` files its `types` conditions name, from the repository's root. */
  readonly typeFiles: readonly string[];
}

function typeFilesOf(target: unknown): string[] {
  if (typeof target !== 'object' || target === null) return [];
  return Object.entries(target).flatMap(([condition, value]) =>
    typeof value === 'string' ? (condition.startsWith('types') ? [value] : []) : typeFilesOf(value),
  );
}

const entries: Entry[] = publishedPackages.flatMap(({ dir, manifest }) =>
  Object.entries((manifest.exports ?? {}) as Record<string, unknown>)
    .filter(([subpath]) => subpath !== './package.json')
    .map(([subpath, target]) => ({
      specifier: manifest.name + subpath.slice(1),
      typeFiles: typeFilesOf(target).map((file) => join(dir, file)),
    })),
);

/** `actual` against `expected`, failing with what was added and removed and what to do about it. */
function expectPinned(what: string, actual: readonly string[], expected: readonly string[]): void {
  const added = actual.filter((n) => !expected.includes(n));
  const removed = expected.filter((n) => !actual.includes(n));
  const change = [added.length > 0 ? `added ${added.join(', ')}` : '', removed.length > 0 ? `removed ${removed.join(', ')}` : '']
    .filter(Boolean)
    .join('; ');
  expect(
    actual,
    `${what} changed (${change}). If that is meant, update the list in ${thisFile} deliberately, with a changeset: a new export is public API, a removed one breaks its users.`,
  ).toEqual(expected);
}

describe('the export list of each entry point', () => {
  test('every entry point of a published package is pinned, and only those', () => {
    expectPinned('The set of entry points', entries.map((e) => e.specifier).sort(), Object.keys(pinned).sort());
  });

  describe.each(entries)('$specifier', ({ specifier, typeFiles }) => {
    const surface = pinned[specifier] ?? { values: [], types: [] };

    test('its runtime exports are the pinned values (from dist)', async () => {
      const module = (await import(specifier)) as Record<string, unknown>;
      expectPinned(`${specifier}'s runtime exports`, Object.keys(module).sort(), surface.values);
    });

    test("its types export the pinned values and types, under every 'types' condition", () => {
      expect(typeFiles.length, `${specifier} has no types condition`).toBeGreaterThan(0);
      for (const file of typeFiles) {
        const names = declaredNames(join(root, file));
        for (const value of surface.values) expect(names, `${file} declares the runtime export ${value}`).toContain(value);
        expectPinned(
          `${specifier}'s type-only exports (${file})`,
          names.filter((n) => !surface.values.includes(n)),
          surface.types,
        );
      }
    });
  });
});

describe('each name from one entry point', () => {
  test('no two entries export the same name, but for the pinned examples pair', () => {
    const owners = new Map<string, string[]>();
    for (const [specifier, { values, types }] of Object.entries(pinned)) {
      for (const name of [...values, ...types]) owners.set(name, [...(owners.get(name) ?? []), specifier]);
    }
    const found: Record<string, string[]> = {};
    for (const [name, where] of owners) {
      if (where.length < 2) continue;
      const pair = where.join(' ~ ');
      found[pair] = [...(found[pair] ?? []), name];
    }
    for (const names of Object.values(found)) names.sort();
    expect(
      found,
      `A name exported by two entry points is one meaning or one import too many; rename it or export it from one entry (or, for a deliberate pair, list it in ${thisFile}'s shared).`,
    ).toEqual(shared);
  });
});
