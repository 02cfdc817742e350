/**
 * `@pol/core`: kernels describe the buffers they need as data; callers decide where they come from.
 *
 * @packageDocumentation
 */

export { alloc } from './alloc.js';
export { ambientIsAsync, ambientspace, withspace } from './ambient.js';
export {
  type AnyArray,
  type ArrayOf,
  type ArrayTypes,
  type DTypeOf,
  type HostArray,
  hostArray,
  isArray,
  type Kind,
  type PolArray,
  shapeOf,
} from './array.js';
export {
  checkpoints,
  type DescribeArgs,
  type Described,
  type Describer,
  type DescriberOf,
  type DescriptionRegistry,
  type Descriptions,
  describe,
  type Kernel,
  type KernelArgs,
  type Lifetime,
  outputs,
  type SpecOf,
  scratch,
} from './descriptions.js';
export {
  type AnyTypedArray,
  type DType,
  type DTypeInfo,
  dtypeInfo,
  dtypeOfTypedArray,
  dtypes,
  hasDType,
  type TypedArrayByDType,
  type TypedArrayConstructorOf,
  type TypedArrayOf,
} from './dtype.js';
export {
  AsyncScopeUnsupportedError,
  CaptureViolation,
  FrameClosedError,
  InvalidArgumentError,
  InvalidDescriptionError,
  InvalidShapeError,
  InvalidSpecError,
  NoAmbientSpaceError,
  NotAFrameError,
  NotAnArrayError,
  NotASpaceError,
  PolError,
  UnknownDTypeError,
  ZeroUnsupportedError,
} from './errors.js';
export { scratchspace } from './frame.js';
export { materialize } from './materialize.js';
export { byteLength, elementCount } from './shape.js';
export { capturing, type KindOf, Similar } from './similar.js';
export {
  type Frame,
  isFrame,
  isSpace,
  type Space,
} from './space.js';
export { checkSpec, type Materialize, type Spec, type SpecProblem, type SpecValue } from './spec.js';
export { isUndef, Undef, zeroed } from './undef.js';
export { zeroArray } from './zero.js';
