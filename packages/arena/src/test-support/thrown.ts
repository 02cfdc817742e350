/** What `f` throws (`undefined` when it returns): for tests that look at an error's class, code and message. */
export function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  return undefined;
}
