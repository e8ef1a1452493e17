/**
 * What went wrong in a build attempt, read from its steps' results: the first failing step and,
 * from its logs, the kind of failure and the line that says it. Pure.
 */
import { CUT_MARKER_LINE } from '../tail.js';

export const STEPS = ['script', 'checkout', 'build', 'history', 'tamper', 'import', 'asv', 'pytest', 'scan'] as const;
export type Step = (typeof STEPS)[number];

export interface StepResult {
  readonly step: Step;
  readonly ok: boolean;
  /** Null when the step was killed at its time limit or never ran a process. */
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  /** Killed because the container wrote more than its disk limit. */
  readonly diskExceeded?: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  /** What the step decided beyond its exit code (e.g. the files a script changed). */
  readonly detail?: string;
}

export type FailureKind =
  | 'timeout'
  | 'invalid-script'
  | 'checkout-failed'
  | 'missing-module'
  | 'missing-header'
  | 'missing-command'
  | 'compiler-error'
  | 'network'
  | 'dependency-resolution'
  | 'python-syntax'
  | 'tampered'
  | 'history-leak'
  | 'import-error'
  | 'asv-discovery'
  | 'pytest-collection'
  | 'environment-tampered'
  | 'out-of-memory'
  | 'out-of-disk'
  | 'out-of-processes'
  | 'unknown';

export interface Failure {
  readonly step: Step;
  readonly kind: FailureKind;
  readonly timedOut: boolean;
  /** The most telling line of the logs (or the step's detail). */
  readonly headline: string;
  /** `missing-module`: the module; `missing-header`: the header file; `missing-command`: the command. */
  readonly subject: string | null;
}

interface Rule {
  readonly kind: FailureKind;
  readonly re: RegExp;
}

// Ordered: the first rule that matches anywhere in the logs wins.
const RULES: readonly Rule[] = [
  { kind: 'missing-header', re: /fatal error: ([\w./+-]+\.(?:h|hpp|hxx|pxd)): No such file or directory/ },
  { kind: 'missing-module', re: /(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?/ },
  { kind: 'missing-command', re: /(?:^|\s)([\w.+-]+): (?:command )?not found\b/m },
  {
    kind: 'network',
    re: /(Temporary failure in name resolution|Name or service not known|Network is unreachable|Failed to establish a new connection|Could not resolve host: [\w.-]+)/,
  },
  {
    kind: 'dependency-resolution',
    re: /(Could not find a version that satisfies the requirement [^\s]+|No matching distribution found for [^\s]+|ResolutionImpossible)/,
  },
  {
    kind: 'compiler-error',
    re: /(error: command '[^']*(?:gcc|g\+\+|cc|c\+\+|clang)[^']*' failed[^\n]*|\S+\.(?:c|cc|cpp|cxx|pyx):\d+:\d+: error: [^\n]+)/,
  },
  { kind: 'python-syntax', re: /(SyntaxError: [^\n]+)/ },
  { kind: 'out-of-disk', re: /[^\n]*(?:No space left on device|File size limit exceeded|Disk quota exceeded)[^\n]*/ },
  {
    kind: 'out-of-processes',
    re: /[^\n]*(?:(?:fork|clone|pthread_create)[^\n]*Resource temporarily unavailable|can't start new thread)[^\n]*/,
  },
  { kind: 'out-of-memory', re: /(Killed signal terminated program|MemoryError|Cannot allocate memory)/ },
];

function meaningfulLines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !/^WARNING: Running pip as the 'root' user/.test(l) && !CUT_MARKER_LINE.test(l));
}

/**
 * The line that says what went wrong: the last one that reads like an error (stderr first, then
 * stdout), else the last line of stderr, else of stdout (a script's chatter on stdout is rarely
 * the reason).
 */
function headlineOf(stderr: string, stdout: string): string {
  const err = meaningfulLines(stderr);
  const out = meaningfulLines(stdout);
  const isError = (l: string) => /error|Error|ERROR|failed|FAILED|Traceback/.test(l);
  const line = [...err].reverse().find(isError) ?? [...out].reverse().find(isError) ?? err.at(-1) ?? out.at(-1) ?? '';
  return line.slice(0, 300);
}

/** The first failing step of an attempt and why, or null when every step passed. */
export function classifyFailure(steps: readonly StepResult[]): Failure | null {
  const failed = steps.find((s) => !s.ok);
  if (!failed) return null;
  const logs = `${failed.stderr}\n${failed.stdout}`;
  const headline = () => headlineOf(failed.stderr, failed.stdout);
  if (failed.diskExceeded) {
    return {
      step: failed.step,
      kind: 'out-of-disk',
      timedOut: false,
      headline: `${failed.step} step killed: the container wrote more than its disk limit (docker.diskMb)`,
      subject: null,
    };
  }
  if (failed.timedOut) {
    return {
      step: failed.step,
      kind: 'timeout',
      timedOut: true,
      headline: `${failed.step} step killed at its time limit after ${Math.round(failed.durationMs / 1000)} s`,
      subject: null,
    };
  }
  if (failed.step === 'script')
    return {
      step: 'script',
      kind: 'invalid-script',
      timedOut: false,
      headline: (failed.detail ?? headline()).slice(0, 300),
      subject: null,
    };
  if (failed.step === 'checkout')
    return { step: 'checkout', kind: 'checkout-failed', timedOut: false, headline: headline(), subject: null };
  if (failed.step === 'history')
    return { step: 'history', kind: 'history-leak', timedOut: false, headline: (failed.detail ?? headline()).slice(0, 300), subject: null };
  // The outside scan of the image (image-scan.ts): its detail names the first file it refused.
  if (failed.step === 'scan')
    return {
      step: 'scan',
      kind: 'environment-tampered',
      timedOut: false,
      headline: (failed.detail ?? headline()).slice(0, 300),
      subject: null,
    };
  if (failed.step === 'tamper')
    return { step: 'tamper', kind: 'tampered', timedOut: false, headline: (failed.detail ?? headline()).slice(0, 300), subject: null };
  if (failed.exitCode === 137 && !/Killed/.test(logs)) {
    return {
      step: failed.step,
      kind: 'out-of-memory',
      timedOut: false,
      headline: `${failed.step} step was killed (exit 137: out of memory?)`,
      subject: null,
    };
  }
  for (const rule of RULES) {
    const m = rule.re.exec(logs);
    if (!m) continue;
    const subject =
      rule.kind === 'missing-header' || rule.kind === 'missing-module' || rule.kind === 'missing-command' ? (m[1] ?? null) : null;
    if (rule.kind === 'missing-command' && subject && ['a', 'the', 'is'].includes(subject)) continue;
    return { step: failed.step, kind: rule.kind, timedOut: false, headline: (m[0] ?? '').trim().slice(0, 300), subject };
  }
  const byStep: Partial<Record<Step, FailureKind>> = { import: 'import-error', asv: 'asv-discovery', pytest: 'pytest-collection' };
  return {
    step: failed.step,
    kind: byStep[failed.step] ?? 'unknown',
    timedOut: false,
    headline: headline() || `${failed.step} step exited ${failed.exitCode}`,
    subject: null,
  };
}

/** One line for logs, the attempt table and the agent: `build/missing-header: fatal error: ...`. */
export function describeFailure(failure: Failure): string {
  return `${failure.step}/${failure.kind}: ${failure.headline}`;
}
