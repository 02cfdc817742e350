import { polVitestConfig } from '../../vitest.shared.ts';

export default polVitestConfig({ testTimeout: 60_000 });
