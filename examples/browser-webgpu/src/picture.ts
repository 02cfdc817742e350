/**
 * The picture: on the left, the step's arena during one training step (bytes upwards, the step's
 * dispatches left to right), each byte range coloured by the frame it was carved in, the ranges
 * each dispatch binds there drawn solid, and the watermark; on the right, the loss so far. The
 * parameters live on a slab of their own, named under the picture, not drawn.
 */
import type { DispatchRecord } from '@pol/webgpu/examples';

export interface PictureState {
  /** The step arena's slab size (bytes). */
  readonly capacity: number;
  /** Its watermark (bytes): here the slab's size, since the slab was sized from it. */
  readonly watermark: number;
  /** The parameters' slab size (bytes). */
  readonly paramsBytes: number;
  /** The warm-up slab that measured the watermark (bytes). */
  readonly warmupBytes: number;
  /** The captured step's dispatches, in order. */
  readonly dispatches: readonly DispatchRecord[];
  /** The loss of every step so far. */
  readonly losses: readonly number[];
  /** How many steps the run has. */
  readonly steps: number;
  /** How the latest step ran. */
  readonly how: 'captured' | 'replayed';
}

const W = 1000;
const H = 560;
const ink = '#1d2733';
const muted = '#66727f';
const grid = '#e3e8ee';
/** Frame levels: 0 is the arena itself, 1 the training step's frame, 2 a kernel's own frame. */
const levels = [
  { name: 'arena: data, gradients, loss', light: '#c9d8ea', solid: '#3d6ea8' },
  { name: "train step's frame: activations, gradients", light: '#c4e6d9', solid: '#2f8a67' },
  { name: "a kernel's own frame: scratch", light: '#f6dcb8', solid: '#c97a16' },
] as const;
/** Column labels: the kernels' names, shortened (`bwd`: a backward pass). */
const shortNames: Record<string, string> = {
  softmaxCrossEntropy: 'xent',
  softmaxCrossEntropyBackward: 'xent bwd',
  linearBackward: 'linear bwd',
  reluBackward: 'relu bwd',
};
const levelOf = (offset: number, marks: readonly number[]) =>
  Math.min(marks.filter((m) => m <= offset).length, levels.length - 1);

export function kib(bytes: number): string {
  if (bytes === 0) return '0';
  return bytes >= 1 << 20 ? `${(bytes / (1 << 20)).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

function text(
  g: CanvasRenderingContext2D,
  s: string,
  x: number,
  y: number,
  options: { size?: number; color?: string; align?: CanvasTextAlign; bold?: boolean } = {},
) {
  g.font = `${options.bold === true ? '600 ' : ''}${options.size ?? 12}px system-ui, sans-serif`;
  g.fillStyle = options.color ?? ink;
  g.textAlign = options.align ?? 'left';
  g.textBaseline = 'middle';
  g.fillText(s, x, y);
}

function drawArena(g: CanvasRenderingContext2D, state: PictureState, box: { x: number; y: number; w: number; h: number }) {
  const { dispatches, capacity, watermark } = state;
  const top = Math.max(capacity, watermark, 1);
  const yOf = (bytes: number) => box.y + box.h - (bytes / top) * box.h;
  text(g, "The step's arena during one step", box.x, box.y - 44, { size: 15, bold: true });
  text(
    g,
    `one GPUBuffer of ${kib(capacity)}: bytes upwards, the step's ${dispatches.length} dispatches left to right`,
    box.x,
    box.y - 26,
    {
      color: muted,
    },
  );

  // Byte ticks every 4 KiB (or coarser).
  const step = Math.max(4096, 2 ** Math.ceil(Math.log2(top / 8)));
  g.strokeStyle = grid;
  g.lineWidth = 1;
  for (let b = 0; b <= top; b += step) {
    const y = Math.round(yOf(b)) + 0.5;
    g.beginPath();
    g.moveTo(box.x, y);
    g.lineTo(box.x + box.w, y);
    g.stroke();
    text(g, kib(b), box.x - 6, y, { align: 'right', color: muted, size: 11 });
  }

  const cw = box.w / Math.max(dispatches.length, 1);
  dispatches.forEach((d, i) => {
    const x = box.x + i * cw + 3;
    const w = cw - 6;
    // The frames open at this dispatch: [0, mark0) the arena, [mark0, mark1) the step's frame, ….
    const bounds = [0, ...d.frameMarks, d.offset];
    for (let level = 0; level + 1 < bounds.length; level++) {
      const from = bounds[level] ?? 0;
      const to = bounds[level + 1] ?? 0;
      if (to <= from) continue;
      g.fillStyle = levels[Math.min(level, levels.length - 1)]?.light ?? '#ddd';
      g.fillRect(x, yOf(to), w, yOf(from) - yOf(to));
    }
    // The ranges this dispatch binds on this arena (the parameters are on their own slab).
    for (const b of d.bindings) {
      if (b.on !== 'arena') continue;
      const level = levelOf(b.offset, d.frameMarks);
      const y0 = yOf(b.offset + b.size);
      const hgt = Math.max(yOf(b.offset) - y0, 1.5);
      g.fillStyle = levels[level]?.solid ?? ink;
      g.fillRect(x + 4, y0, w - 8, hgt);
      if (hgt > 13) text(g, b.name, x + w / 2, y0 + hgt / 2, { align: 'center', color: '#fff', size: 10 });
    }
    // The kernel's name, slanted under its column.
    g.save();
    g.translate(x + w / 2, box.y + box.h + 10);
    g.rotate(-Math.PI / 5);
    text(g, shortNames[d.kernel] ?? d.kernel, 0, 0, { align: 'right', size: 11, color: muted });
    g.restore();
  });

  // The watermark.
  const wy = Math.round(yOf(watermark)) + 0.5;
  g.strokeStyle = '#c0362c';
  g.lineWidth = 2;
  g.setLineDash([6, 4]);
  g.beginPath();
  g.moveTo(box.x - 2, wy);
  g.lineTo(box.x + box.w + 2, wy);
  g.stroke();
  g.setLineDash([]);
  text(
    g,
    `watermark ${kib(watermark)} = the slab (measured on a ${kib(state.warmupBytes)} warm-up slab)`,
    box.x + box.w,
    wy - 9,
    {
      align: 'right',
      color: '#c0362c',
      size: 11,
    },
  );

  // Legend.
  const ly = box.y + box.h + 62;
  text(g, 'pale: the bytes carved in a frame · solid: the ranges the dispatch binds, named as the kernel names them', box.x, ly, {
    size: 11,
    color: muted,
  });
  levels.forEach((level, i) => {
    const y = ly + 20 + i * 18;
    g.fillStyle = level.light;
    g.fillRect(box.x, y - 6, 14, 12);
    g.fillStyle = level.solid;
    g.fillRect(box.x + 16, y - 6, 14, 12);
    text(g, level.name, box.x + 38, y, { size: 11 });
  });
  // The parameters, beside the legend: on a slab of their own, so not in this picture.
  const notDrawn = [
    `not drawn: the weights and biases, on a slab`,
    `of their own (${kib(state.paramsBytes)}): the layers bind them`,
    'read-only, and only SGD writes them',
  ];
  notDrawn.forEach((line, i) => {
    text(g, line, box.x + 320, ly + 20 + i * 18, { size: 11, color: muted });
  });
  text(g, 'bytes', box.x - 6, box.y - 8, { align: 'right', size: 11, color: muted });
}

function drawLoss(g: CanvasRenderingContext2D, state: PictureState, box: { x: number; y: number; w: number; h: number }) {
  const { losses, steps } = state;
  const last = losses.at(-1);
  text(g, 'Loss', box.x, box.y - 44, { size: 15, bold: true });
  text(
    g,
    last === undefined
      ? 'waiting for the first step'
      : `step ${losses.length} of ${steps} (${state.how}) · loss ${last.toFixed(4)}`,
    box.x,
    box.y - 26,
    { color: muted },
  );
  const top = Math.max(...losses, 1e-6) * 1.05;
  const xOf = (i: number) => box.x + (i / Math.max(steps - 1, 1)) * box.w;
  const yOf = (v: number) => box.y + box.h - (v / top) * box.h;
  g.strokeStyle = grid;
  g.lineWidth = 1;
  g.strokeRect(box.x + 0.5, box.y + 0.5, box.w, box.h);
  for (const v of [0, top / 2, top]) text(g, v.toFixed(2), box.x - 6, yOf(v), { align: 'right', color: muted, size: 11 });
  text(g, '1', box.x, box.y + box.h + 12, { color: muted, size: 11 });
  text(g, `step ${steps}`, box.x + box.w, box.y + box.h + 12, { align: 'right', color: muted, size: 11 });
  if (losses.length === 0) return;
  g.strokeStyle = '#3d6ea8';
  g.lineWidth = 2;
  g.beginPath();
  losses.forEach((v, i) => {
    if (i === 0) g.moveTo(xOf(i), yOf(v));
    else g.lineTo(xOf(i), yOf(v));
  });
  g.stroke();
  if (last !== undefined) {
    g.fillStyle = '#c0362c';
    g.beginPath();
    g.arc(xOf(losses.length - 1), yOf(last), 4, 0, 2 * Math.PI);
    g.fill();
  }
}

function drawFacts(g: CanvasRenderingContext2D, state: PictureState, x: number, y: number) {
  const used = (100 * state.watermark) / Math.max(state.warmupBytes, 1);
  const facts = [
    ['1.', `warm-up: one eager step on a ${kib(state.warmupBytes)} slab`],
    ['', `used ${used.toFixed(1)}% of it: the watermark, ${kib(state.watermark)}`],
    ['2.', `a new slab of exactly that: ${kib(state.capacity)}`],
    ['3.', 'step 1 on it, captured (run and recorded)'],
    ['4.', `steps 2 to ${state.steps} replayed: ${state.dispatches.length} dispatches,`],
    ['', 'one submit, no JavaScript of the step,'],
    ['', 'no carve, no bind group'],
  ] as const;
  text(g, 'How the slab was sized', x, y, { size: 15, bold: true });
  facts.forEach(([n, line], i) => {
    text(g, n, x, y + 26 + i * 18, { size: 12, color: muted });
    text(g, line, x + 18, y + 26 + i * 18, { size: 12 });
  });
}

/** Draw the whole picture onto `canvas` (sized 1000 × 560 CSS pixels, sharp on high-DPI screens). */
export function drawPicture(canvas: HTMLCanvasElement, state: PictureState): void {
  const ratio = globalThis.devicePixelRatio ?? 1;
  if (canvas.width !== W * ratio) {
    canvas.width = W * ratio;
    canvas.height = H * ratio;
  }
  const g = canvas.getContext('2d');
  if (g === null) throw new Error('This canvas has no 2D context.');
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.fillStyle = '#fff';
  g.fillRect(0, 0, W, H);
  drawArena(g, state, { x: 70, y: 70, w: 560, h: 360 });
  drawLoss(g, state, { x: 700, y: 70, w: 270, h: 200 });
  drawFacts(g, state, 680, 340);
}
