import { describe, expect, it } from 'vitest';
import { roundOrders } from './gpu-timing.js';

describe('roundOrders', () => {
  it('gives every round a permutation of the variants', () => {
    const orders = roundOrders(6);
    for (let r = 0; r < 50; r++) expect([...orders.next()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('lets each variant follow every other about equally often over a run of rounds', () => {
    const n = 5;
    const rounds = 200;
    const orders = roundOrders(n);
    const follows = new Map<string, number>();
    let previous: number | undefined;
    for (let r = 0; r < rounds; r++) {
      for (const v of orders.next()) {
        if (previous !== undefined && previous !== v) follows.set(`${previous}>${v}`, (follows.get(`${previous}>${v}`) ?? 0) + 1);
        previous = v;
      }
    }
    // 20 ordered pairs; about 200 · 5 / 20 = 50 each. A rotated order would give 10 pairs none.
    expect(follows.size).toBe(n * (n - 1));
    for (const count of follows.values()) expect(count).toBeGreaterThan(25);
  });

  it('is the same in every run (a fixed seed)', () => {
    const a = roundOrders(7);
    const b = roundOrders(7);
    for (let r = 0; r < 10; r++) expect([...a.next()]).toEqual([...b.next()]);
  });
});
