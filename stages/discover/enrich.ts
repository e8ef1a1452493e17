/**
 * Enrichment of a candidate through the GitHub API, and the record of a local clone (the thin
 * shells around filters.ts and python-version.ts).
 */
import { dirname } from 'node:path';
import type { RepositoryRecord } from '../../cache/repositories.js';
import { PerfmineError } from '../../pipeline/errors.js';
import { pickAsvConfigPath } from '../../pipeline/services/git-parse.js';
import type { GitHubService } from '../../pipeline/services/github.js';
import type { ItemContext, Outcome } from '../../pipeline/stage.js';
import { judgeMetadata, judgePython } from './filters.js';
import type { GitDiscoverInput, GitHubDiscoverInput } from './input.js';
import type { ProjectFiles } from '../../pipeline/concepts/python-project.js';
import { readPythonSupport } from './python-version.js';

export async function enrichFromGitHub(ctx: ItemContext, input: GitHubDiscoverInput): Promise<Outcome<RepositoryRecord>> {
  const gh = ctx.services.github;
  let repo;
  try {
    repo = await gh.getRepository(input.name);
  } catch (error) {
    if (error instanceof PerfmineError && (error.reason === 'github-not-found' || error.reason === 'github-gone')) {
      return { status: 'dropped', reason: 'repo-not-found', detail: `${input.name}: not on GitHub (deleted, private or mistyped)` };
    }
    throw error;
  }
  const renamed = repo.full_name.toLowerCase() !== input.name.toLowerCase();
  if (renamed) ctx.log.info({ from: input.name, to: repo.full_name }, 'repository renamed; stored under its new name');
  const record: RepositoryRecord = {
    name: repo.full_name,
    githubId: repo.id,
    source: 'github',
    localPath: null,
    stars: repo.stargazers_count,
    forks: repo.forks_count,
    fork: repo.fork,
    archived: repo.archived,
    disabled: repo.disabled,
    defaultBranch: repo.default_branch,
    pushedAt: repo.pushed_at,
    asvConfigPath: null,
    pythonRequires: null,
    formerNames: renamed ? [input.name] : [],
    verdict: 'kept',
  };
  const rules = input.rules;
  const meta = judgeMetadata(
    { stars: repo.stargazers_count, fork: repo.fork, archived: repo.archived, disabled: repo.disabled, pushedAt: repo.pushed_at },
    rules,
    new Date(input.asOf),
  );
  if (!meta.keep) return { status: 'dropped', reason: meta.reason, detail: meta.detail, output: { ...record, verdict: meta.reason } };

  const tree = await gh.getTree(repo.full_name, repo.default_branch, true);
  const blobs = tree.tree.filter((e) => e.type === 'blob').map((e) => e.path);
  const asvConfigPath = pickAsvConfigPath(blobs) ?? (tree.truncated ? input.asvConfigPath : null);
  const withAsv = { ...record, asvConfigPath };
  if (asvConfigPath === null && rules.requireAsvConfig) {
    return {
      status: 'dropped',
      reason: 'no-asv-config',
      detail: `no asv.conf.json(c) in ${repo.default_branch}`,
      output: { ...withAsv, verdict: 'no-asv-config' },
    };
  }

  const files = await readProjectFiles(gh, repo.full_name, repo.default_branch, new Set(blobs), asvConfigPath, tree.truncated);
  const support = readPythonSupport(files, rules.minPython);
  const withPython = { ...withAsv, pythonRequires: support.evidence };
  const python = judgePython(support, rules);
  if (!python.keep)
    return { status: 'dropped', reason: python.reason, detail: python.detail, output: { ...withPython, verdict: python.reason } };
  return { status: 'done', output: withPython, ...(support.supported === null ? { detail: 'Python version support not stated' } : {}) };
}

/** pyproject.toml, setup.cfg and setup.py at the root, else next to the asv config (monorepos). */
async function readProjectFiles(
  gh: GitHubService,
  repo: string,
  ref: string,
  blobs: ReadonlySet<string>,
  asvConfigPath: string | null,
  truncated: boolean,
): Promise<ProjectFiles> {
  const dirs = [''];
  if (asvConfigPath && dirname(asvConfigPath) !== '.') dirs.push(`${dirname(asvConfigPath)}/`);
  for (const dir of dirs) {
    const read = (name: string) =>
      truncated || blobs.has(`${dir}${name}`) ? gh.getFileText(repo, `${dir}${name}`, ref) : Promise.resolve(null);
    const files: ProjectFiles = {
      pyproject: await read('pyproject.toml'),
      setupCfg: await read('setup.cfg'),
      setupPy: await read('setup.py'),
    };
    if (files.pyproject !== null || files.setupCfg !== null || files.setupPy !== null) return files;
  }
  return {};
}

/** The record of a local clone: what git says, no API call, no filter. */
export async function describeClone(ctx: ItemContext, input: GitDiscoverInput): Promise<Outcome<RepositoryRecord>> {
  const git = ctx.services.git;
  const asv = await git.findAsvConfig(input.path, input.tip);
  if (asv === null) ctx.log.warn({ path: input.path }, "no asv.conf.json(c) in the clone's default branch");
  const text = async (name: string) => (await git.show(input.path, input.tip, name))?.toString('utf8') ?? null;
  const support = readPythonSupport(
    { pyproject: await text('pyproject.toml'), setupCfg: await text('setup.cfg'), setupPy: await text('setup.py') },
    input.settings.minPython,
  );
  const dates = await git.commitDates(input.path, input.tip);
  return {
    status: 'done',
    output: {
      name: input.name,
      githubId: null,
      source: 'git',
      localPath: input.path,
      stars: null,
      forks: null,
      fork: false,
      archived: false,
      disabled: false,
      defaultBranch: input.defaultBranch,
      pushedAt: dates.committerDate,
      asvConfigPath: asv?.path ?? null,
      pythonRequires: support.evidence,
      formerNames: [],
      verdict: 'kept',
    },
  };
}
