import { z } from 'zod';

/**
 * Paths whose changes do not change what the package does: tests, docs, examples, benchmarks,
 * CI, build artifacts, packaging metadata, prose. Globs (`**` any depth, `*` within a path
 * segment, `?` one character) matched against the whole path; a pattern without `/` matches the
 * file name at any depth. A pull request that touches only such paths is dropped (`no-core-files`).
 */
export const DEFAULT_NON_FUNCTIONAL_PATHS: readonly string[] = [
  // tests
  '**/tests/**',
  '**/test/**',
  '**/testing/**',
  'test_*.py',
  '*_test.py',
  'conftest.py',
  // docs and examples
  '**/doc/**',
  '**/docs/**',
  '**/examples/**',
  '**/example/**',
  '**/tutorials/**',
  // benchmarks (the asv config's benchmark_dir is added per pull request)
  '**/benchmarks/**',
  '**/asv_bench/**',
  '**/bench/**',
  // CI and repository housekeeping
  '.github/**',
  '.circleci/**',
  '.gitlab-ci.yml',
  '.azure-pipelines/**',
  'azure-pipelines.yml',
  '.pre-commit-config.yaml',
  '.gitignore',
  '.gitattributes',
  '.mailmap',
  '.coveragerc',
  'codecov.yml',
  '.readthedocs.y*ml',
  // build artifacts
  '**/build/**',
  '**/dist/**',
  '**/*.egg-info/**',
  '**/__pycache__/**',
  '*.pyc',
  // packaging metadata
  'pyproject.toml',
  'setup.cfg',
  'MANIFEST.in',
  'tox.ini',
  'noxfile.py',
  'requirements*.txt',
  '**/requirements/**',
  'environment*.yml',
  'environment*.yaml',
  'asv.conf.json',
  'asv.conf.jsonc',
  // prose
  '*.md',
  '*.rst',
  'LICENSE*',
  'AUTHORS*',
  'CHANGELOG*',
  'CHANGES*',
  'NEWS*',
];

/** Configuration of the filter stage (the `filter` key of perfmine.config.json). */
export const filterConfig = z
  .object({
    /** More changed files than this: dropped (`too-many-files`). */
    maxFiles: z.number().int().positive().default(500),
    /** More added + deleted lines than this: dropped (`too-many-lines`). */
    maxChangedLines: z.number().int().positive().default(80_000),
    /** A diff longer than this many tokens cannot be shown to the LLM: dropped (`diff-too-large`). */
    maxDiffTokens: z.number().int().positive().default(64_000),
    /** The tokenizer that counts the diff (js-tiktoken). */
    tokenizer: z.enum(['o200k_base', 'cl100k_base']).default('o200k_base'),
    /** Non-functional path globs; replaces the default list. */
    nonFunctionalPaths: z.array(z.string().min(1)).default([...DEFAULT_NON_FUNCTIONAL_PATHS]),
    /** Globs added to `nonFunctionalPaths` (the usual way to extend the list). */
    extraNonFunctionalPaths: z.array(z.string().min(1)).default([]),
  })
  .strict();

export type FilterConfig = z.infer<typeof filterConfig>;
