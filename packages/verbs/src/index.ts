/**
 * `@pol/verbs`: `Allocating` turns a mutating kernel into a functional verb that materializes the
 * buffers the kernel describes (outputs and checkpoints from the caller's space, scratch from a
 * frame on it); `Shadows` pairs primals with zeroed gradient buffers for reverse-mode kernels.
 *
 * @packageDocumentation
 * @module @pol/verbs
 */

export {
  Allocating,
  type DescribedNames,
  type KernelInputs,
  type KernelOptions,
  type KernelOutputs,
  type Verb,
  type VerbArgs,
  type VerbOptions,
  type VerbResult,
  type VerbReturn,
} from './allocating.js';
export {
  BufferMismatchError,
  DescriptionConflictError,
  NoSpaceError,
  NotAKernelError,
  NotAPrimalError,
  ShadowMismatchError,
  ZeroUnsupportedError,
} from './errors.js';
export {
  type Leaves,
  type Primal,
  type ShadowSpec,
  Shadows,
  type ShadowsOf,
  shadowSpec,
  walkShadows,
  zeroShadows,
} from './shadows.js';
