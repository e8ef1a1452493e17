import type { Db } from '../../cache/store.js';
import { Ledger } from '../../cache/ledger.js';
import { pullRequestHash, savePullRequest } from '../../cache/pull-requests.js';
import { prKey } from '../../pipeline/concepts/keys.js';
import { type CollectOutput, type FileChange, type PullRequest } from '../../pipeline/concepts/records/pull-request.js';

export const ASV_CONF = `{
    // The version of the config file format.
    "version": 1,
    "project": "fastlib",
    "project_url": "https://example.org/fastlib",
    "repo": ".",
    "benchmark_dir": "benchmarks",
    "environment_type": "virtualenv",
}
`;

export function file(path: string, additions = 10, deletions = 2, extra: Partial<FileChange> = {}): FileChange {
  return { path, previousPath: null, status: 'modified', additions, deletions, binary: false, ...extra };
}

/** A collected pull request as collect would store it; every field can be overridden. */
export function makePullRequest(overrides: Partial<PullRequest> = {}): PullRequest {
  const files = overrides.files ?? [file('fastlib/core.py', 12, 4)];
  const pr: PullRequest = {
    repo: 'acme/fastlib',
    number: 101,
    url: 'https://github.com/acme/fastlib/pull/101',
    title: 'PERF: speed up groupby sum',
    body: 'Summing by group was slow for many groups because of a Python loop.\n\nThis vectorizes it.',
    labels: [],
    author: 'alice',
    authorAssociation: 'MEMBER',
    createdAt: '2025-04-02T10:00:00Z',
    mergedAt: '2025-04-10T12:00:00Z',
    baseRef: 'main',
    defaultBranch: 'main',
    mergedIntoDefault: true,
    baseSha: 'a'.repeat(40),
    mergeSha: 'b'.repeat(40),
    headSha: 'c'.repeat(40),
    files,
    additions: files.reduce((n, f) => n + f.additions, 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0),
    changedFiles: files.length,
    diff: 'diff --git a/fastlib/core.py b/fastlib/core.py\n--- a/fastlib/core.py\n+++ b/fastlib/core.py\n@@ -1,3 +1,3 @@\n-    for k in keys: out[k] += v\n+    np.add.at(out, keys, values)\n',
    comments: [],
    linkedIssues: [],
    asvConfig: { path: 'asv.conf.json', text: ASV_CONF },
    source: 'github',
    missing: [],
    ...overrides,
  };
  return pr;
}

/** Stores the record and a done collect ledger row for it, as the collect stage would. */
export function storeCollected(db: Db, pr: PullRequest): CollectOutput {
  savePullRequest(db, pr);
  const output: CollectOutput = {
    repo: pr.repo,
    number: pr.number,
    mergedAt: pr.mergedAt,
    baseSha: pr.baseSha,
    mergeSha: pr.mergeSha,
    contentHash: pullRequestHash(pr),
  };
  new Ledger(db).complete(
    'collect',
    1,
    { key: prKey(pr.repo, pr.number), repo: pr.repo, at: pr.mergedAt, inputHash: output.contentHash },
    { status: 'done', reason: null, detail: null, output },
    null,
  );
  return output;
}
