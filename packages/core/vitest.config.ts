import { polVitestConfig } from '../../vitest.shared.js';

export default polVitestConfig();
