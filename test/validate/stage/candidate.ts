import { Ledger } from '../../../cache/ledger.js';
import type { Db } from '../../../cache/store.js';
import type { ClassifyOutput } from '../../../pipeline/concepts/records/classify-output.js';
import { prKey } from '../../../pipeline/concepts/keys.js';
import type { PullRequest } from '../../../pipeline/concepts/records/pull-request.js';
import type { SynthesizeOutput } from '../../../pipeline/concepts/records/synthesize-output.js';
import { commitKey } from '../../../pipeline/concepts/keys.js';
import { makePullRequest, storeCollected } from '../../helpers/pull-request.js';

export const BUILD_SCRIPT = '#!/usr/bin/env bash\nset -euo pipefail\npip install --no-build-isolation -e .\n';

/**
 * A candidate as validate finds it: the collected record, a done classify item, and a done
 * synthesize item for its base commit.
 */
export function storeCandidate(
  db: Db,
  overrides: Partial<PullRequest> = {},
  classify: Partial<ClassifyOutput> = {},
): { pr: PullRequest; key: string } {
  const pr = makePullRequest(overrides);
  const collected = storeCollected(db, pr);
  const ledger = new Ledger(db);
  const key = prKey(pr.repo, pr.number);
  const output: ClassifyOutput = {
    repo: pr.repo,
    number: pr.number,
    baseSha: pr.baseSha,
    mergeSha: pr.mergeSha,
    mergedAt: pr.mergedAt,
    contentHash: collected.contentHash,
    classifier: 'gpt-4.1-mini',
    reasoning: 'Replaces a Python loop with a vectorized call.',
    category: 'use_better_algorithm',
    difficulty: 'medium',
    problemStatement: `# Speed up ${pr.title}\n\nSumming by group is slow.\n`,
    ...classify,
  };
  ledger.complete(
    'classify',
    1,
    { key, repo: pr.repo, at: pr.mergedAt, inputHash: `c-${key}` },
    { status: 'done', reason: null, detail: null, output },
    null,
  );
  const synth: SynthesizeOutput = {
    repo: pr.repo,
    sha: pr.baseSha,
    commitDate: '2025-04-01T00:00:00Z',
    imageTag: `perfmine/env:${pr.baseSha.slice(0, 12)}`,
    script: BUILD_SCRIPT,
    scriptSource: 'agent',
    attemptId: 7,
    pythonVersion: '3.11',
    repoImageTag: `perfmine/repo:${pr.repo.replace('/', '__')}`,
    baseImage: 'perfmine/base:bookworm',
    toolchainImage: 'perfmine/base:bookworm',
    asvConfigPath: 'asv.conf.json',
    importName: 'fastlib',
    cloneSource: `https://github.com/${pr.repo}.git`,
  };
  const sk = commitKey(pr.repo, pr.baseSha);
  ledger.complete(
    'synthesize',
    1,
    { key: sk, repo: pr.repo, at: null, inputHash: `s-${sk}` },
    { status: 'done', reason: null, detail: null, output: synth },
    null,
  );
  return { pr, key };
}
