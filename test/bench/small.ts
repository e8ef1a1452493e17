import { mkdirSync } from 'node:fs';
import { collectFilterBenchmark } from './collect-filter.js';
const dir = process.argv[4];
if (dir) mkdirSync(dir, { recursive: true });
console.log(JSON.stringify(await collectFilterBenchmark({ repos: Number(process.argv[2] ?? 5), pulls: Number(process.argv[3] ?? 30), ...(dir ? { dir } : {}) }), null, 1));
