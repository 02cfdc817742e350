/**
 * The stack a cycle-checking walk keeps of the containers above the one it is at: one spare kept
 * between walks (core's spec check, `@pol/verbs`'s shadow walks), so that walking a nested
 * structure allocates nothing once a first walk has grown it.
 *
 * @module
 */

let spare: object[] | undefined;

/**
 * Take the spare ancestors stack, or a fresh empty one while another walk holds it (a walk that
 * starts inside another, through a getter). Push a container before walking into it and pop it
 * after (popped, not truncated: setting `length` to 0 drops the backing store, and the next walk's
 * first push would allocate it again); hand the stack back with {@link keepAncestors} when the walk
 * returns normally. A walk that throws need not: the next one gets a fresh stack.
 *
 * @example
 * ```ts
 * import { keepAncestors, takeAncestors } from '@pol/core/backend';
 * function depth(x: unknown, ancestors: object[]): number {
 *   if (typeof x !== 'object' || x === null) return 0;
 *   if (ancestors.includes(x)) throw new Error('a cycle');
 *   ancestors.push(x);
 *   let deepest = 0;
 *   for (const value of Object.values(x)) deepest = Math.max(deepest, depth(value, ancestors));
 *   ancestors.pop();
 *   return deepest + 1;
 * }
 * const ancestors = takeAncestors();
 * console.log(depth({ a: { b: {} } }, ancestors)); // 3
 * keepAncestors(ancestors);
 * ```
 */
export function takeAncestors(): object[] {
  const ancestors = spare;
  if (ancestors === undefined) return [];
  spare = undefined;
  return ancestors;
}

/**
 * Hand back a stack from {@link takeAncestors} after a walk that returned normally, for the next
 * walk. A stack that still holds containers (a walk left unbalanced) is not kept.
 *
 * @example
 * ```ts
 * import { keepAncestors, takeAncestors } from '@pol/core/backend';
 * const first = takeAncestors();
 * keepAncestors(first);
 * console.log(takeAncestors() === first); // true: the next walk reuses it
 * ```
 */
export function keepAncestors(ancestors: object[]): void {
  if (ancestors.length === 0) spare = ancestors;
}
