/** What `f` throws (`undefined` when it returns): for tests that look at an error's fields. */
export function caught(f: () => unknown): unknown {
  try {
    f();
  } catch (error) {
    return error;
  }
  return undefined;
}
