// A second kind of space for the type tests, as a backend adds one (@pol/webgpu adds 'gpu'):
// declared here so that verbs' type tests need no backend in their program.
import type { DType, HostArray } from '@pol/core';

/** What a `'device'` space hands out, for the type tests: a host array under another kind's name. */
export interface DeviceArray<D extends DType> extends HostArray<D> {
  readonly onDevice: true;
}

declare module '@pol/core' {
  interface ArrayTypes<D extends DType> {
    device: DeviceArray<D>;
  }
}
