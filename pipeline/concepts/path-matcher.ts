/**
 * Which changed paths count as functional code. Pure.
 *
 * Globs: `**` matches any number of path segments (also none), `*` any characters within one
 * segment, `?` one character within a segment. A glob without `/` matches the file name at any
 * depth (`*.md` matches `docs/a/b.md`); a glob with `/` matches the whole path, and a leading
 * `** /` (without the space) lets it start at any depth.
 */
const compiledGlobs = new Map<string, RegExp>();

/** A glob as a regular expression (compiled once per glob). */
export function globToRegExp(glob: string): RegExp {
  let re = compiledGlobs.get(glob);
  if (!re) compiledGlobs.set(glob, (re = compileGlob(glob)));
  return re;
}

function compileGlob(glob: string): RegExp {
  const anchoredToName = !glob.includes('/');
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        // `**/` any directories (or none); a trailing `**` anything below.
        if (glob[i + 2] === '/') {
          re += '(?:.*/)?';
          i += 2;
        } else {
          re += '.*';
          i += 1;
        }
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(anchoredToName ? `(?:^|/)${re}$` : `^${re}$`);
}

export interface PathMatcher {
  /** The first glob that matches, or null for a functional path. */
  nonFunctional(path: string): string | null;
}

const matchers = new Map<string, PathMatcher>();

/**
 * The matcher of a list of globs. A repository's pull requests share one list (the defaults plus
 * its benchmark directory) and mostly touch the same files: the matcher of a list is made once,
 * and remembers its answers for the paths it has seen.
 */
export function pathMatcher(globs: readonly string[]): PathMatcher {
  const key = globs.join('\0');
  let matcher = matchers.get(key);
  if (!matcher) {
    if (matchers.size >= 256) matchers.clear();
    matchers.set(key, (matcher = newMatcher(globs)));
  }
  return matcher;
}

function newMatcher(globs: readonly string[]): PathMatcher {
  const compiled = globs.map((g) => ({ glob: g, re: globToRegExp(g) }));
  const seen = new Map<string, string | null>();
  return {
    nonFunctional(path: string): string | null {
      let answer = seen.get(path);
      if (answer === undefined) {
        const p = path.replace(/^\.\//, '');
        answer = null;
        for (const { glob, re } of compiled) {
          if (re.test(p)) {
            answer = glob;
            break;
          }
        }
        if (seen.size >= 20_000) seen.clear();
        seen.set(path, answer);
      }
      return answer;
    },
  };
}

/** The asv config's benchmark directory as a glob, relative to the repository root. */
export function benchmarkDirGlob(configPath: string, benchmarkDir: string): string | null {
  const base = configPath.includes('/') ? configPath.slice(0, configPath.lastIndexOf('/')) : '';
  const parts: string[] = base ? base.split('/') : [];
  for (const part of benchmarkDir.replace(/\\/g, '/').split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  if (parts.length === 0) return null;
  return `${parts.join('/')}/**`;
}

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
