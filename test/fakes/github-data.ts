/**
 * Synthetic repositories for the loopback GitHub server: deterministic, data-driven and cheap
 * to make (files are generated when first asked), so that 100 repositories x 300 pull requests
 * take well under a second to build.
 */
import { createHash } from 'node:crypto';
import type { FakeFile, FakeIssue, FakePull, FakeRepo } from './github-server.js';

export interface SyntheticRepoOptions {
  readonly owner?: string;
  readonly name?: string;
  /** Merged pull requests, spread evenly over [mergedFrom, mergedTo). */
  readonly pulls: number;
  readonly mergedFrom: string;
  readonly mergedTo: string;
  readonly filesPerPull?: number;
  readonly stars?: number;
  readonly defaultBranch?: string;
  /** Every k-th pull request says `Fixes #<issue>` for an issue opened before it (0: none). */
  readonly issueEvery?: number;
  /** Extra files of the default branch's tree. */
  readonly files?: Readonly<Record<string, string>>;
}

export function sha(...parts: readonly (string | number)[]): string {
  return createHash('sha1').update(parts.join(':')).digest('hex');
}

export function syntheticFiles(repo: string, number: number, count: number): FakeFile[] {
  return Array.from({ length: count }, (_, k) => ({
    filename: `pkg/module_${(number * 7 + k) % 97}/file_${k}.py`,
    status: k % 5 === 4 ? 'added' : 'modified',
    additions: 2 + (k % 3),
    deletions: k % 5 === 4 ? 0 : 1,
    patch:
      k % 5 === 4
        ? `@@ -0,0 +1,${2 + (k % 3)} @@\n${Array.from({ length: 2 + (k % 3) }, (_, i) => `+line ${i} of ${repo}#${number}`).join('\n')}`
        : `@@ -1,2 +1,${3 + (k % 3)} @@\n-old\n${Array.from({ length: 2 + (k % 3) }, (_, i) => `+new ${i}`).join('\n')}\n context`,
  }));
}

export function syntheticRepo(index: number, options: SyntheticRepoOptions): FakeRepo {
  const owner = options.owner ?? `org${index}`;
  const name = options.name ?? `project${index}`;
  const fullName = `${owner}/${name}`;
  const from = Date.parse(options.mergedFrom);
  const span = Date.parse(options.mergedTo) - from;
  const step = span / Math.max(1, options.pulls);
  const issues: FakeIssue[] = [];
  const pulls: FakePull[] = [];
  for (let i = 0; i < options.pulls; i++) {
    const number = 1000 + i * 2;
    const merged = from + Math.floor(i * step);
    const created = merged - 2 * 86_400_000;
    const linked = options.issueEvery && i % options.issueEvery === 0 ? number - 1 : null;
    if (linked !== null) {
      issues.push({
        number: linked,
        title: `Slow thing ${linked}`,
        body: `It is slow (${fullName}).`,
        createdAt: new Date(created - 86_400_000).toISOString(),
        comments: [
          { user: 'reporter', body: 'before the PR', createdAt: new Date(created - 3_600_000).toISOString() },
          { user: 'maintainer', body: 'after the PR was opened', createdAt: new Date(created + 3_600_000).toISOString() },
        ],
      });
    }
    const count = options.filesPerPull ?? 3;
    pulls.push({
      number,
      title: `Speed up part ${i} of ${name}`,
      body: linked !== null ? `Fixes #${linked}. Makes it faster.` : 'Makes it faster.',
      user: `dev${i % 17}`,
      labels: i % 3 === 0 ? ['performance'] : [],
      createdAt: new Date(created).toISOString(),
      mergedAt: new Date(merged).toISOString(),
      updatedAt: new Date(merged + 3_600_000).toISOString(),
      headSha: sha(fullName, number, 'head'),
      mergeSha: sha(fullName, number, 'merge'),
      baseSha: sha(fullName, number, 'base'),
      files: () => syntheticFiles(fullName, number, count),
    });
  }
  return {
    fullName,
    stars: options.stars ?? 500 + index,
    pushedAt: options.mergedTo,
    defaultBranch: options.defaultBranch ?? 'main',
    files: {
      'asv.conf.json': `{"version": 1, "project": "${name}"}\n`,
      'pyproject.toml': '[project]\nrequires-python = ">=3.9"\n',
      ...(options.files ?? {}),
    },
    pulls,
    issues,
  };
}

/** `count` synthetic repositories (`org<i>/project<i>`). */
export function syntheticRepos(count: number, options: Omit<SyntheticRepoOptions, 'owner' | 'name'>): FakeRepo[] {
  return Array.from({ length: count }, (_, i) => syntheticRepo(i, options));
}
