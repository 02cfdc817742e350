// The repository's shared configuration: a JSON report that the root test script adds up. Copied
// out of the repository, replace this file with `export default {};`.
import { polVitestConfig } from '../../vitest.shared.ts';

export default polVitestConfig({ testTimeout: 60_000 });
