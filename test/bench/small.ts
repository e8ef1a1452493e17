import { collectFilterBenchmark } from './collect-filter.js';
console.log(JSON.stringify(await collectFilterBenchmark({ repos: Number(process.argv[2] ?? 5), pulls: Number(process.argv[3] ?? 30) }), null, 1));
