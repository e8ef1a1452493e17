import { afterAll, describe, expect, it } from 'vitest';
import { loadPrompt } from '../../pipeline/prompts.js';
import { classifyHeuristically } from '../../stages/classify/classify.js';
import { patchVocabulary } from '../../pipeline/concepts/leak-check.js';
import type { ClassifyOutput } from '../../pipeline/concepts/records/classify-output.js';
import { statementTemplateText } from '../../pipeline/concepts/leak-check.js';
import { describeRepository } from '../../stages/classify/problem-statement.js';
import type { LinkedIssue } from '../../pipeline/concepts/records/pull-request.js';
import { emittedStatement } from '../../stages/emit/statement.js';
import { measuringToolText } from '../../stages/emit/measuring-tool.js';
import { benchmarkName, formatMeasure } from '../../stages/emit/measured-workloads.js';
import { filterConfig } from '../../stages/filter/config.js';
import { decideFilter } from '../../stages/filter/decide.js';
import type { GitRepo } from '../helpers/git.js';
import { makeCase, SOLUTION_CASES, type SolutionCase } from '../classify/solution-prs.js';

/**
 * Issue 18's must-show: generated pull requests whose title, body and branch name the solution,
 * classified under `--llm none` and assembled into the statement emit writes. The statement holds
 * the workloads (names, parameters, base values, the reference speedups) and none of the
 * solution's words or identifiers; a linked issue that describes the symptom is kept, its parts
 * that name the solution are not.
 */
const template = loadPrompt('problem-statement');
const templateText = statementTemplateText(template);
const MEASURING_TOOL = measuringToolText({ engine: 'perfmine', workloads: 6, compareMinutes: 2 });
const repos: GitRepo[] = [];
afterAll(() => {
  for (const r of repos) r.remove();
});

function rulesOnly(c: SolutionCase, options: Parameters<typeof makeCase>[1] = {}) {
  const made = makeCase(c, options);
  repos.push(made.repo);
  const { pr } = made;
  const filter = decideFilter(pr, 'hash', filterConfig.parse({})).output;
  const vocabulary = patchVocabulary(pr.diff, filter.coreFiles, null);
  const classified = classifyHeuristically(
    { pr, filter, repositoryDescription: describeRepository(pr, 'Text layout helpers.') },
    { statementTemplate: template, vocabulary },
  );
  if (classified.status !== 'done') throw new Error(`classify dropped it: ${classified.reason}`);
  const emitted = emittedStatement({
    classify: classified.output,
    improved: c.improved,
    diff: pr.diff,
    files: pr.files,
    templateText,
    measuringTool: MEASURING_TOOL,
  });
  return { pr, output: classified.output, emitted };
}

const wordRe = (word: string) => new RegExp(`(?<![\\w-])${word.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`, 'i');

describe('rules-only statements of pull requests whose text names the solution', () => {
  for (const c of SOLUTION_CASES) {
    for (const source of ['github', 'git'] as const) {
      it(`${c.name} (${source} source): the measured workloads, none of the solution's words`, () => {
        const { pr, output, emitted } = rulesOnly(c, { source });
        expect(emitted.ok).toBe(true);
        if (!emitted.ok) return;
        const statement = emitted.statement;
        for (const w of c.improved) {
          expect(statement).toContain(`\`${benchmarkName(w)}\``);
          if (w.params) expect(statement).toContain(`| ${w.params} |`);
          expect(statement).toContain(`| ${formatMeasure(w.baseMedian, w.unit)} | ${w.speedup!.toFixed(2)}x |`);
        }
        for (const word of c.solutionWords) expect(statement, word).not.toMatch(wordRe(word));
        for (const id of output.leakCheck!.identifiers) expect(statement, id).not.toMatch(wordRe(id));
        expect(statement).not.toContain(pr.title);
        expect(statement).not.toContain(c.branch);
        expect(statement).toContain('`acme/textlib`: Text layout helpers.');
        expect(output).toMatchObject({ category: c.category, categoryModel: 'heuristic', problemSource: 'measured' });
        expect(output.difficulty).toBe('easy');
      });
    }
  }

  it('keeps the symptom of a linked issue written before the pull request, and leaves out its parts that name the solution', () => {
    const comment = (body: string, createdAt: string) => ({
      author: 'zed',
      authorAssociation: null,
      body,
      createdAt,
      kind: 'issue' as const,
      path: null,
    });
    const issue: LinkedIssue = {
      repo: 'acme/textlib',
      number: 40,
      title: 'cell_len is slow on long ASCII strings',
      body: 'Rendering a line of 10,000 ASCII characters takes 12 ms, almost all of it in `cell_len` (reported by @zed).',
      state: 'closed',
      author: 'zed',
      createdAt: '2025-03-01T00:00:00Z',
      labels: [],
      comments: [
        comment('Same on 13.9: a wide table takes 2 s to print.', '2025-03-02T00:00:00Z'),
        comment('Could we keep them in `_SINGLE_CELLS` and ask `issuperset`?', '2025-03-03T00:00:00Z'),
        comment('FIXED LATER: thanks!', '2025-05-01T00:00:00Z'),
      ],
      via: 'closing-keyword',
    };
    const { output, emitted } = rulesOnly(SOLUTION_CASES[0]!, { linkedIssues: [issue] });
    expect(emitted.ok).toBe(true);
    if (!emitted.ok) return;
    const statement = emitted.statement;
    expect(statement).toContain('## Issue #40: cell_len is slow on long ASCII strings');
    expect(statement).toContain(
      'Rendering a line of 10,000 ASCII characters takes 12 ms, almost all of it in `cell_len` (reported by @user1).',
    );
    expect(statement).toContain('Same on 13.9: a wide table takes 2 s to print.');
    expect(statement).not.toContain('_SINGLE_CELLS');
    expect(statement).not.toContain('issuperset');
    expect(statement).not.toContain('FIXED LATER');
    expect(output.leakingIssueParts).toBe(1);
  });
});

describe('the emit-time leak check, on planted leaks in both modes', () => {
  const c = SOLUTION_CASES[0]!;

  it('LLM mode: an extracted observation that names an added identifier, a new file, or quotes added code drops the statement', () => {
    const { pr, output } = rulesOnly(c);
    const extracted = (observation: string): ClassifyOutput => ({
      ...output,
      classifier: 'model',
      problemSource: 'extracted',
      problemStatement: `# Task\n\n# What was observed\n\n${observation}\n`,
    });
    const leaky = emittedStatement({
      classify: extracted('cell_len walks the text; _SINGLE_CELLS would answer at once.'),
      improved: c.improved,
      diff: pr.diff,
      files: pr.files,
      templateText,
      measuringTool: MEASURING_TOOL,
    });
    expect(leaky).toMatchObject({
      ok: false,
      reason: 'statement-leaks-solution',
      detail: 'the statement names the solution: identifier `_SINGLE_CELLS`',
    });
    const quoted = emittedStatement({
      classify: extracted('if _SINGLE_CELLS.issuperset(text):\n    return len(text)'),
      improved: c.improved,
      diff: pr.diff,
      files: pr.files,
      templateText,
      measuringTool: MEASURING_TOOL,
    });
    expect(quoted.ok).toBe(false);
    // `issuperset` is a plain word: a leak in code, not in prose; the quote is caught whatever
    if (!quoted.ok)
      expect(quoted.leaks.map((l) => l.text)).toEqual(['_SINGLE_CELLS', 'if _SINGLE_CELLS . issuperset ( text ) : return len ( text )']);
    const clean = emittedStatement({
      classify: extracted('cell_len takes 12 ms on a 10,000-character ASCII line.'),
      improved: c.improved,
      diff: pr.diff,
      files: pr.files,
      templateText,
      measuringTool: MEASURING_TOOL,
    });
    expect(clean).toMatchObject({
      ok: true,
      statement: '# Task\n\n# What was observed\n\ncell_len takes 12 ms on a 10,000-character ASCII line.\n',
    });
  });

  it('rules-only mode: a leak planted in the statement classify recorded is caught after the workloads are filled in', () => {
    const { pr, output } = rulesOnly(c);
    const planted = {
      ...output,
      problemStatement: output.problemStatement.replace(
        '# Related issues',
        'Hint: look at `frozenset(SINGLE_CELL_CHARS)` and _SINGLE_CELLS.\n\n# Related issues',
      ),
    };
    const r = emittedStatement({
      classify: planted,
      improved: c.improved,
      diff: pr.diff,
      files: pr.files,
      templateText,
      measuringTool: MEASURING_TOOL,
    });
    expect(r).toMatchObject({ ok: false, reason: 'statement-leaks-solution' });
    const bucketCase = SOLUTION_CASES.find((x) => x.name === 'bisect')!;
    const bisect = rulesOnly(bucketCase);
    const withFile = {
      ...bisect.output,
      problemStatement: bisect.output.problemStatement.replace('# Related issues', 'See textlib/_buckets.py.\n\n# Related issues'),
    };
    const f = emittedStatement({
      classify: withFile,
      improved: bucketCase.improved,
      diff: bisect.pr.diff,
      files: bisect.pr.files,
      templateText,
      measuringTool: MEASURING_TOOL,
    });
    expect(f.ok).toBe(false);
    if (!f.ok) expect(f.leaks).toContainEqual({ kind: 'file-name', text: 'textlib/_buckets.py' });
  });

  it("a statement that is the pull request's own text (an old record) is never emitted; a rules-only one needs improved workloads", () => {
    const { pr, output } = rulesOnly(c);
    expect(
      emittedStatement({
        classify: { ...output, problemSource: 'pr-text' },
        improved: c.improved,
        diff: pr.diff,
        files: pr.files,
        templateText,
        measuringTool: MEASURING_TOOL,
      }),
    ).toMatchObject({ ok: false, reason: 'statement-leaks-solution' });
    expect(
      emittedStatement({ classify: output, improved: [], diff: pr.diff, files: pr.files, templateText, measuringTool: MEASURING_TOOL }),
    ).toMatchObject({
      ok: false,
      reason: 'no-measured-workloads',
    });
  });

  it('without a recorded vocabulary (an older classify record) it judges from the diff over the default core files', () => {
    const { pr, output } = rulesOnly(c);
    const { leakCheck: _dropped, ...old } = output;
    const extracted = { ...old, problemSource: 'extracted' as const, problemStatement: 'We should use `_SINGLE_CELLS`.' };
    expect(
      emittedStatement({
        classify: extracted,
        improved: c.improved,
        diff: pr.diff,
        files: pr.files,
        templateText,
        measuringTool: MEASURING_TOOL,
      }),
    ).toMatchObject({
      ok: false,
      reason: 'statement-leaks-solution',
    });
  });
});

describe('measured values in the statement', () => {
  it('formats seconds, bytes and other units with three significant digits', () => {
    expect(formatMeasure(2.53e-5, 'seconds')).toBe('25.3 µs');
    expect(formatMeasure(0.0412, 'seconds')).toBe('41.2 ms');
    expect(formatMeasure(3.2e-9, 'seconds')).toBe('3.2 ns');
    expect(formatMeasure(12.345, 'seconds')).toBe('12.3 s');
    expect(formatMeasure(31_457_280, 'bytes')).toBe('30 MiB');
    expect(formatMeasure(812, 'bytes')).toBe('812 B');
    expect(formatMeasure(42.42, 'rows')).toBe('42.4 rows');
    expect(formatMeasure(null, 'seconds')).toBe('not measured');
    expect(benchmarkName({ name: "m.C.f('a', 1)", params: "'a', 1" })).toBe('m.C.f');
  });
});
