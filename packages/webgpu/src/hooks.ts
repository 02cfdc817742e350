/**
 * The hooks the instrumentation owner dispatches to (see `instrument.ts`): what a hook sees of the
 * calls on a device, its queue, its command encoders and their compute passes. Types only.
 *
 * @module
 */

/** A call's arguments, as the wrapper received them. */
export type Args = ArrayLike<unknown>;

/**
 * Something that watches the commands of one command encoder, or of one compute pass: checked
 * mode's usage-scope check, or a capture's recording.
 */
export interface CommandObserver {
  /** The methods it needs to see, or `undefined` for every method of the object. */
  readonly methods: ReadonlySet<string> | undefined;
  /** Before a method reaches the device; throw to refuse it. */
  before?(name: string, args: Args): void;
  /** After the method returned `result`. */
  after?(name: string, args: Args, result: unknown): void;
  /** For an encoder's observer: the observer of the compute pass `beginComputePass` just began. */
  pass?(descriptor: unknown): CommandObserver | undefined;
}

/** The capture hook: a recording in progress on one device, while its step runs. */
export interface RecordingHook {
  /** The capture's label, for messages. */
  readonly label: string;
  /**
   * Before a device, queue or buffer method runs: throw the `CaptureViolation` for a call a graph
   * cannot hold (`where.name`, such as `device.createBuffer`), or return.
   */
  refuse(where: 'device' | 'queue' | 'buffer', name: string, args: Args): void;
  /** `queue.submit`: check that the command buffers were recorded, forward, and record the submit. */
  submit(submit: (this: unknown, ...args: unknown[]) => unknown, queue: unknown, args: Args): unknown;
  /** The observer of a command encoder created while the step runs. */
  encoder(): CommandObserver;
}

/** The placement hook: a warm-up step running on a planning space, watched for its bindings. */
export interface PlanningHook {
  /** The observer of a command encoder created while the warm-up runs. */
  encoder(): CommandObserver;
}
