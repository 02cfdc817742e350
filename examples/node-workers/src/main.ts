import { demo } from './demo.js';

for (const line of await demo()) console.log(line);
