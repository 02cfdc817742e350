import { polVitestConfig } from '../../vitest.shared.ts';

export default polVitestConfig();
