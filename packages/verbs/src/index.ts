/**
 * `@pol/verbs`: `Allocating` turns a mutating kernel into a functional verb that materializes the
 * buffers the kernel describes (outputs and checkpoints from the caller's space, scratch from a
 * frame on it); `Shadows` pairs primals with zeroed gradient buffers for reverse-mode kernels;
 * `outParameters` brings in functions written in the positional out-parameter style.
 *
 * @packageDocumentation
 * @module @pol/verbs
 */

export { Allocating } from './allocating.js';
export {
  BareTypedArrayError,
  BufferMismatchError,
  DescriberContractError,
  DescriptionConflictError,
  ExtraInputError,
  HostDataRequiredError,
  KindMismatchError,
  MisplacedSpaceError,
  MissingInputError,
  NoSpaceError,
  NotAKernelError,
  NotAPrimalError,
  OutputsWrittenError,
  ShadowMismatchError,
  UndescribedKernelError,
  VerbArgumentError,
} from './errors.js';
export {
  type OutParameterDescriptions,
  type OutParametersKernel,
  outParameters,
} from './out-parameters.js';
export {
  type Leaves,
  type Primal,
  type ShadowSpec,
  Shadows,
  type ShadowsLike,
  type ShadowsOf,
  shadowSpec,
  walkShadows,
  zeroShadows,
} from './shadows.js';
export type {
  AllocatingOptions,
  DescribedNames,
  KernelInputs,
  KernelOptions,
  KernelOutputs,
  Returning,
  Verb,
  VerbArgs,
  VerbOptions,
  VerbResult,
  VerbReturn,
} from './signature.js';
