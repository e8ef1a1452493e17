#!/usr/bin/env node
import { main } from './main.js';

const code = await main(process.argv.slice(2));
// Let pending writes to stdout drain; do not wait for stray handles (a keep-alive socket).
process.exitCode = code;
setImmediate(() => process.exit(code));
