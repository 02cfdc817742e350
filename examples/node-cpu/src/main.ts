import { demo } from './demo.js';

for (const line of demo()) console.log(line);
