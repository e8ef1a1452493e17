import type { Reporter, TestModule } from 'vitest/node';

/** The prefix of this reporter's lines (.ci/test-summary collects them). */
export const MARK = '!! failed';

interface ErrorLike {
  readonly message?: string;
  readonly name?: string;
  readonly stack?: string;
}

/** An error's first line and the first stack frame in the project's own files (not node_modules). */
export function describeError(error: ErrorLike): string {
  const message = (error.message ?? String(error.name ?? 'error')).split('\n')[0]!.slice(0, 300);
  const frame = (error.stack ?? '')
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.startsWith('at ') && !l.includes('node_modules') && !l.includes('node:'));
  return frame ? `${message} (${frame.slice(3, 200)})` : message;
}

/**
 * Prints why a test file failed as soon as it ends, not only in the report vitest prints when the
 * whole run ends: a run that CI stops at its time limit never prints that report, and its log then
 * said which files failed but not why. Each line starts with MARK, the file and the test (or the
 * hook's suite) it is about.
 */
export default class ImmediateFailures implements Reporter {
  constructor(private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)) {}

  onTestModuleEnd(module: TestModule): void {
    if (module.ok()) return;
    const file = module.relativeModuleId;
    for (const error of module.errors()) this.write(`${MARK} ${file} (file): ${describeError(error)}`);
    for (const suite of module.children.allSuites())
      for (const error of suite.errors()) this.write(`${MARK} ${file} > ${suite.fullName}: ${describeError(error)}`);
    for (const test of module.children.allTests('failed'))
      for (const error of test.result().errors ?? []) this.write(`${MARK} ${file} > ${test.fullName}: ${describeError(error)}`);
  }
}
