#!/usr/bin/env node
import { main } from './main.js';

// A reader that goes away (`perfmine --help | head`) ends the output, not the process with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

const code = await main(process.argv.slice(2));
// Let pending writes to stdout drain; do not wait for stray handles (a keep-alive socket).
process.exitCode = code;
setImmediate(() => process.exit(code));
