import type { TaskRow } from '../../../stages/emit/row.js';
import { AGENT_USER } from '../../../pipeline/services/verifier/verifier-folder.js';

/**
 * A Harbor task's instruction.md: the environment as the agent finds it, what it hands in (the
 * working tree of /repo), how the verifier judges it and the reward, how to measure with the
 * environment's perfmine-bench, then the task's problem statement. Pure.
 */
export function harborInstruction(input: {
  readonly row: TaskRow;
  /** The environment's perfmine-bench knows `compare --rebuild-working`. */
  readonly rebuildWorking: boolean;
  readonly improved: readonly string[];
}): string {
  const { row } = input;
  const sha = row.base_commit;
  const rebuild = input.rebuildWorking
    ? [
        "`perfmine-bench compare` measures the package as the image's Python imports it, which is /repo's working tree: edits to",
        'Python files count at once. After changing compiled code or build files, `perfmine-bench compare --rebuild-working` builds',
        'a copy of your working tree from source in a fresh virtual environment, as the verifier does, and measures that.',
      ]
    : [
        "`perfmine-bench compare` measures the package as the image's Python imports it, which is /repo's working tree: edits to",
        'Python files count at once; after changing compiled code, rebuild the extensions in place first.',
      ];
  return [
    `# ${row.instance_id}`,
    '',
    `The repository ${row.repo} is checked out at /repo, at commit ${sha} with its history up to that commit only.`,
    `You work as the user \`${AGENT_USER}\`, who owns /repo. There is no network.`,
    '',
    "Make the code described below faster, and leave your change in /repo's working tree: what counts is its files (tracked",
    `ones, and untracked ones that are not ignored) against ${sha}, committed or not.`,
    '',
    '## How your change is judged',
    '',
    'When you are done, the verifier takes your change, except any change to the tests, the benchmarks, the asv configuration',
    "and pytest's configuration (both sides keep the base commit's). It builds the base commit and your tree from source with",
    "the task's build script, each in a fresh virtual environment, and:",
    '',
    '- runs the test suite on both: every test that passes at the base commit must pass with your change;',
    '- calls every benchmark on both: each must return what it returns at the base commit;',
    "- calls the package's functions the benchmarks call on both, on inputs you do not see (the benchmarks' own, perturbed):",
    '  each must return what it returns at the base commit;',
    "- measures every workload of the asv benchmarks on both and on the reference solution, interleaved, with perfmine's",
    '  harness, counting the CPU time of every process each side starts.',
    '',
    'The reward is -1 when a check fails, and when the change patches a clock, names the harness, the verifier or the test',
    'runner, forges exit statuses or writes to descriptors it did not open, starts processes that leave their parent, or',
    'puts names together at run time. Otherwise it is max(0, ln S / ln S_expert), where S is the geometric mean of your',
    `speedups (base time / your time; 1 where the measurement cannot tell a change) on the workloads the reference solution made faster (${input.improved.map((w) => `\`${w}\``).join(', ') || 'none recorded'}),`,
    "and S_expert the reference's, measured in the same run: 0 for no improvement, 1 for matching the reference, above 1 for",
    'beating it. A workload that is fast only on the inputs it is timed with (a cache keyed on them, answers kept for them,',
    'code that behaves differently when it is timed) counts as no speedup.',
    '',
    '## Measuring',
    '',
    'The environment has `perfmine-bench` (it needs no network): `perfmine-bench list` lists the workloads,',
    '`perfmine-bench run --bench <regex>` times them, and `perfmine-bench compare --bench <regex>` measures your working tree',
    "against the base commit, the two interleaved, and prints each workload's speedup with its interval, the smallest speedup it",
    'can detect and its verdict (`--rounds 5` for a quicker, rougher answer; `--json` for programs).',
    ...rebuild,
    '',
    '## Problem statement',
    '',
    row.problem_statement.endsWith('\n') ? row.problem_statement : `${row.problem_statement}\n`,
  ].join('\n');
}
