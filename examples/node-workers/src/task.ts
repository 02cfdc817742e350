/**
 * What the main thread sends a worker: plain numbers. Where the batch's arrays lie in the shared
 * slab (absolute byte offsets), their dims, and which rows to compute. No array crosses the thread
 * boundary: the worker makes its own views of those bytes.
 */
export interface Task {
  /** Byte offset of X (`[rows, features]`, float32) in the slab. */
  readonly x: number;
  /** Byte offset of Y (`[rows, classes]`, float32). */
  readonly y: number;
  /** Byte offsets of the parameters: W1 `[features, hidden]`, b1 `[hidden]`, W2 `[hidden, classes]`, b2 `[classes]`. */
  readonly w1: number;
  readonly b1: number;
  readonly w2: number;
  readonly b2: number;
  /** The batch's dims. */
  readonly rows: number;
  readonly features: number;
  readonly hidden: number;
  readonly classes: number;
  /** The rows this task computes: `start` up to, not including, `end`. */
  readonly start: number;
  readonly end: number;
}

/** The names of a task's fields, in order. */
export const taskFields = ['x', 'y', 'w1', 'b1', 'w2', 'b2', 'rows', 'features', 'hidden', 'classes', 'start', 'end'] as const;

/** The bytes of the slab that tasks may name: the main thread's region, which holds X, the parameters and Y. */
export interface DataBounds {
  readonly start: number;
  readonly end: number;
}

const F32_BYTES = 4;

function range(what: string, offset: number, floats: number, bounds: DataBounds): string | undefined {
  const end = offset + floats * F32_BYTES;
  if (offset % F32_BYTES !== 0) return `${what} at byte ${offset} is not on a 4-byte boundary (float32 needs one)`;
  if (offset < bounds.start || end > bounds.end) {
    return (
      `${what} needs bytes ${offset} to ${end} of the slab, outside the data region (bytes ${bounds.start} to ${bounds.end}): ` +
      'a task may name only arrays of the main thread’s region'
    );
  }
  return undefined;
}

function overlaps(a: number, aFloats: number, b: number, bFloats: number): boolean {
  return a < b + bFloats * F32_BYTES && b < a + aFloats * F32_BYTES;
}

/**
 * What is wrong with `task`, in words, or `undefined` when nothing is: every field a whole number
 * (the dims at least 1), the row range inside the batch, every array inside the data region on a
 * 4-byte boundary, and Y clear of X and of the parameters (a worker writes Y). The main thread asks
 * this before it sends a task and the worker again before it runs one. On a good task it makes no
 * object (the text is built only for a refusal).
 */
export function taskProblem(task: unknown, bounds: DataBounds): string | undefined {
  if (typeof task !== 'object' || task === null)
    return `a task is an object of numbers (${taskFields.join(', ')}), got ${String(task)}`;
  const t = task as Record<string, unknown>;
  for (let i = 0; i < taskFields.length; i++) {
    const name = taskFields[i] as string;
    const v = t[name];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0)
      return `task.${name} must be a whole number of 0 or more, got ${String(v)}`;
  }
  const { x, y, w1, b1, w2, b2, rows, features, hidden, classes, start, end } = task as Task;
  if (rows < 1 || features < 1 || hidden < 1 || classes < 1) {
    return `the dims must be 1 or more, got rows ${rows}, features ${features}, hidden ${hidden}, classes ${classes}`;
  }
  if (start >= end || end > rows) return `the rows ${start} to ${end} are not a non-empty range of the batch's ${rows} rows`;
  const problem =
    range('X', x, rows * features, bounds) ??
    range('Y', y, rows * classes, bounds) ??
    range('W1', w1, features * hidden, bounds) ??
    range('b1', b1, hidden, bounds) ??
    range('W2', w2, hidden * classes, bounds) ??
    range('b2', b2, classes, bounds);
  if (problem !== undefined) return problem;
  const yFloats = rows * classes;
  if (
    overlaps(y, yFloats, x, rows * features) ||
    overlaps(y, yFloats, w1, features * hidden) ||
    overlaps(y, yFloats, b1, hidden) ||
    overlaps(y, yFloats, w2, hidden * classes) ||
    overlaps(y, yFloats, b2, classes)
  ) {
    return `Y (bytes ${y} to ${y + yFloats * F32_BYTES}) overlaps X or a parameter: the workers would overwrite their own inputs`;
  }
  return undefined;
}

/**
 * Refuse a task that {@link taskProblem} finds wrong, with a `RangeError` that says what and why
 * (a `RangeError` keeps its class when piscina sends it back from a worker).
 */
export function checkTask(task: unknown, bounds: DataBounds): asserts task is Task {
  const problem = taskProblem(task, bounds);
  if (problem !== undefined) throw new RangeError(`refused task: ${problem}. Nothing was computed.`);
}

/** The rows 0..rows split into `parts` contiguous blocks whose sizes differ by one row at most. */
export function splitRows(rows: number, parts: number): readonly (readonly [number, number])[] {
  const blocks: [number, number][] = [];
  const n = Math.max(1, Math.min(parts, rows));
  for (let i = 0; i < n; i++) blocks.push([Math.floor((i * rows) / n), Math.floor(((i + 1) * rows) / n)]);
  return blocks;
}
