import { describe, expect, it } from 'vitest';
import { attachSuppressed, closeAfterFailure } from './backend.js';

describe('attachSuppressed', () => {
  it('attaches the secondary failure to the error, which stays the same error', () => {
    const error = new Error('first');
    const secondary = new Error('second');
    attachSuppressed(error, secondary);
    expect((error as Error & { suppressed: unknown }).suppressed).toBe(secondary);
    expect(error.message).toBe('first');
  });

  it('keeps the first attached failure', () => {
    const error = new Error('first');
    const a = new Error('a');
    attachSuppressed(error, a);
    attachSuppressed(error, new Error('b'));
    expect((error as Error & { suppressed: unknown }).suppressed).toBe(a);
  });

  it('leaves a thrown value that cannot carry anything as it is', () => {
    for (const thrown of ['a string', 42, undefined, null]) {
      expect(() => attachSuppressed(thrown, new Error('second'))).not.toThrow();
    }
  });

  it('never throws, a frozen error included (it would replace the error being reported)', () => {
    const error = Object.freeze(new Error('frozen'));
    expect(() => attachSuppressed(error, new Error('second'))).not.toThrow();
    expect('suppressed' in error).toBe(false);
  });
});

describe('closeAfterFailure', () => {
  it('closes the closable', () => {
    let closed = 0;
    const error = new Error('work failed');
    closeAfterFailure({ close: () => void closed++ }, error);
    expect(closed).toBe(1);
    expect('suppressed' in error).toBe(false);
  });

  it('attaches a close failure to the error instead of throwing it', () => {
    const error = new Error('work failed');
    const closeError = new Error('close failed');
    expect(() =>
      closeAfterFailure(
        {
          close: () => {
            throw closeError;
          },
        },
        error,
      ),
    ).not.toThrow();
    expect((error as Error & { suppressed: unknown }).suppressed).toBe(closeError);
  });
});
