/**
 * Colouring a conflict graph with few colours: the arithmetic of placement. A vertex is a carve,
 * an edge joins two carves that must not share a GPUBuffer, a colour is a slab. DSatur first (the
 * vertex with the most differently coloured neighbours next), then, while the count is above the
 * lower bound (2 for a graph with an edge, 3 for one with an odd cycle), an exact search for one
 * colour fewer, within a budget of steps: the graphs of real steps are small, and sparse.
 *
 * @module
 */

/** Steps the exact search may take per attempt before settling for what it has. */
const SEARCH_BUDGET = 200_000;

/**
 * Colour the graph of `n` vertices with neighbour lists `adjacent`: a colour (0, 1, …) per
 * vertex, no two neighbours alike, the colours used numbered in order of first use.
 */
export function colour(n: number, adjacent: readonly (readonly number[])[]): number[] {
  let best = dsatur(n, adjacent);
  const floor = lowerBound(n, adjacent);
  for (let k = count(best) - 1; k >= floor; k--) {
    const found = search(n, adjacent, k);
    if (found === undefined) break;
    best = found;
  }
  return renumber(best);
}

/** How many colours a colouring uses. */
export function count(colours: readonly number[]): number {
  let most = -1;
  for (const c of colours) most = Math.max(most, c);
  return most + 1;
}

/** 0 for no vertex, 1 without edges, 2 for a bipartite graph, 3 for a graph with an odd cycle. */
function lowerBound(n: number, adjacent: readonly (readonly number[])[]): number {
  if (n === 0) return 0;
  if (adjacent.every((a) => a.length === 0)) return 1;
  return oddCycle(n, adjacent) === undefined ? 2 : 3;
}

/**
 * An odd cycle of the graph (its vertices, in order), or `undefined` when it has none (it is
 * bipartite: two colours do).
 */
export function oddCycle(n: number, adjacent: readonly (readonly number[])[]): number[] | undefined {
  const side = new Array<number>(n).fill(-1);
  const parent = new Array<number>(n).fill(-1);
  for (let start = 0; start < n; start++) {
    if (side[start] !== -1) continue;
    side[start] = 0;
    const queue = [start];
    for (let q = 0; q < queue.length; q++) {
      const v = queue[q] as number;
      for (const u of adjacent[v] ?? []) {
        if (side[u] === -1) {
          side[u] = 1 - (side[v] as number);
          parent[u] = v;
          queue.push(u);
        } else if (side[u] === side[v]) {
          const up = (x: number) => {
            const path: number[] = [];
            for (let y = x; y !== -1; y = parent[y] as number) path.push(y);
            return path;
          };
          const a = up(v);
          const b = up(u);
          const onA = new Set(a);
          const meet = b.find((y) => onA.has(y)) as number;
          return [...a.slice(0, a.indexOf(meet) + 1), ...b.slice(0, b.indexOf(meet)).reverse()];
        }
      }
    }
  }
  return undefined;
}

function dsatur(n: number, adjacent: readonly (readonly number[])[]): number[] {
  const colours = new Array<number>(n).fill(-1);
  for (let step = 0; step < n; step++) {
    let pick = -1;
    let pickSaturation = -1;
    let pickDegree = -1;
    for (let v = 0; v < n; v++) {
      if (colours[v] !== -1) continue;
      const seen = new Set<number>();
      for (const u of adjacent[v] ?? []) if ((colours[u] as number) >= 0) seen.add(colours[u] as number);
      const degree = adjacent[v]?.length ?? 0;
      if (seen.size > pickSaturation || (seen.size === pickSaturation && degree > pickDegree)) {
        pick = v;
        pickSaturation = seen.size;
        pickDegree = degree;
      }
    }
    colours[pick] = smallestFree(pick, adjacent, colours);
  }
  return colours;
}

function smallestFree(v: number, adjacent: readonly (readonly number[])[], colours: readonly number[]): number {
  let c = 0;
  while ((adjacent[v] ?? []).some((u) => colours[u] === c)) c++;
  return c;
}

/** A colouring with at most `k` colours, by backtracking in order of degree, or `undefined` (none, or the budget ran out). */
function search(n: number, adjacent: readonly (readonly number[])[], k: number): number[] | undefined {
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (adjacent[b]?.length ?? 0) - (adjacent[a]?.length ?? 0));
  const colours = new Array<number>(n).fill(-1);
  let steps = 0;
  const place = (i: number, used: number): boolean => {
    if (i === n) return true;
    if (++steps > SEARCH_BUDGET) return false;
    const v = order[i] as number;
    // A new colour only as the next unused one: colourings that differ by a renaming are one.
    for (let c = 0; c < Math.min(k, used + 1); c++) {
      if ((adjacent[v] ?? []).some((u) => colours[u] === c)) continue;
      colours[v] = c;
      if (place(i + 1, Math.max(used, c + 1))) return true;
      colours[v] = -1;
    }
    return false;
  };
  return place(0, 0) ? colours : undefined;
}

/** Number the colours in order of first use (vertex 0's colour is 0). */
function renumber(colours: readonly number[]): number[] {
  const names = new Map<number, number>();
  return colours.map((c) => {
    let name = names.get(c);
    if (name === undefined) {
      name = names.size;
      names.set(c, name);
    }
    return name;
  });
}
