import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';

const script = fileURLToPath(new URL('./exit-check.mjs', import.meta.url));
const swiftshader = '/usr/lib/chromium/vk_swiftshader_icd.json';

// Dawn aborts or segfaults a process whose GPU object was garbage-collected; the documented path
// (keep it on globalThis, or in a module variable a function uses) must exit cleanly every time.
// The plain script (an arena and an upload) is the one that crashes with a top-level `const gpu`.
test.each([
  ['an arena and an upload', [], 3],
  ['a captured step replayed, and a readback', ['capture', 'readback'], 2],
])('a plain script that ends with its device alive exits cleanly, run after run: %s', (_, args, runs) => {
  for (let run = 1; run <= runs; run++) {
    const result = spawnSync(process.execPath, ['--expose-gc', script, ...args], {
      encoding: 'utf8',
      timeout: 50_000,
      env: { ...process.env, VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? swiftshader },
    });
    const what = `run ${run}: status ${result.status}, signal ${result.signal}\n${result.stderr}`;
    expect(result.signal, what).toBeNull();
    expect(result.status, what).toBe(0);
    expect(result.stdout).toContain('done, the device still alive');
  }
});
