export * from './cli.js';
export { tempDir, memoryLogger, testContext } from './context.js';
