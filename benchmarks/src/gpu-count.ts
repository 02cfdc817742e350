/**
 * Counting the GPU objects a step creates: buffers and bind groups, the two things a steady loop
 * should stop making. The benchmark counts them on the device itself, the way any user can
 * instrument their own device: it replaces `createBuffer` and `createBindGroup` on the device
 * instance with counting forwarders before anything else sees the device (Pol included, which
 * then wraps these, so Pol's own creations are counted too). Nothing of Pol's is wrapped.
 */

/** Objects created on one device so far. */
export interface GpuObjectCount {
  /** `device.createBuffer` calls. */
  readonly buffers: number;
  /** `device.createBindGroup` calls. */
  readonly bindGroups: number;
}

/** A live count: read `buffers + bindGroups` before and after a step to know what it created. */
export interface GpuObjectCounter extends GpuObjectCount {
  /** Buffers and bind groups together. */
  readonly total: number;
}

const counters = new WeakMap<GPUDevice, GpuObjectCounter>();

/**
 * Start counting the buffers and bind groups created on `device` (once per device; a second call
 * returns the same counter). Call it before the device is handed to Pol or to any other wrapper,
 * so that every creation goes through the counter.
 */
export function countGpuObjects(device: GPUDevice): GpuObjectCounter {
  const known = counters.get(device);
  if (known !== undefined) return known;
  const count = { buffers: 0, bindGroups: 0 };
  const createBuffer = device.createBuffer;
  const createBindGroup = device.createBindGroup;
  device.createBuffer = function (this: GPUDevice, descriptor: GPUBufferDescriptor): GPUBuffer {
    count.buffers++;
    return createBuffer.call(this, descriptor);
  };
  device.createBindGroup = function (this: GPUDevice, descriptor: GPUBindGroupDescriptor): GPUBindGroup {
    count.bindGroups++;
    return createBindGroup.call(this, descriptor);
  };
  const counter: GpuObjectCounter = {
    get buffers() {
      return count.buffers;
    },
    get bindGroups() {
      return count.bindGroups;
    },
    get total() {
      return count.buffers + count.bindGroups;
    },
  };
  counters.set(device, counter);
  return counter;
}
