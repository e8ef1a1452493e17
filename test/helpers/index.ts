export * from './cli.js';
export { tempDir, harness } from './harness.js';
export { memoryLogger } from './context.js';
