import { describe, expect, it } from 'vitest';
import type { VerifiedScript } from '../../cache/build-scripts.js';
import { orderNeighbours } from '../../stages/synthesize/neighbours.js';
import { checkScript, normalizeScript, scriptHash } from '../../pipeline/services/environments/script-check.js';
import { bashSyntaxError } from '../../pipeline/services/environments/script-syntax.js';
import { seriesSatisfies as satisfiesSpecifier } from '../../pipeline/concepts/pep440.js';
import { choosePython } from '../../stages/synthesize/python-version.js';
import { commitKey, parseCommitKey } from '../../pipeline/concepts/keys.js';
import { groupCandidates } from '../../stages/synthesize/plan.js';
import { attemptImageTag, envImageTag, imageSlug, repoImageTag } from '../../pipeline/services/environments/image-names.js';
import { TRANSIENT_TAG_RE } from '../../pipeline/services/docker.js';
import type { ClassifyOutput } from '../../pipeline/concepts/records/classify-output.js';

const day = (n: number) => new Date(Date.UTC(2024, 0, 1 + n, 12)).toISOString();
const script = (name: string) => `#!/usr/bin/env bash\necho ${name}\n`;
const verified = (attemptId: number, sha: string, d: number, s: string): VerifiedScript => ({
  attemptId,
  sha,
  commitDate: day(d),
  script: s,
  scriptHash: scriptHash(s),
});

describe('orderNeighbours', () => {
  it('orders by distance in commit date, in both directions', () => {
    const out = orderNeighbours({ sha: 't', commitDate: day(10) }, [
      verified(1, 'a', 1, script('a')),
      verified(2, 'b', 12, script('b')),
      verified(3, 'c', 9, script('c')),
    ]);
    expect(out.map((n) => n.sha)).toEqual(['c', 'b', 'a']);
    expect(out.map((n) => n.distanceMs / 86_400_000)).toEqual([1, 2, 9]);
  });

  it('keeps one entry per distinct script, the nearest commit that verified it', () => {
    const same = script('same');
    const out = orderNeighbours({ sha: 't', commitDate: day(10) }, [
      verified(1, 'far', 2, same),
      verified(2, 'near', 8, same),
      verified(3, 'other', 5, script('other')),
    ]);
    expect(out.map((n) => n.sha)).toEqual(['near', 'other']);
  });

  it('skips the target commit itself, breaks ties by the older commit, and stops at the limit', () => {
    const list = [verified(1, 't', 10, script('self')), verified(2, 'later', 11, script('l')), verified(3, 'earlier', 9, script('e'))];
    expect(orderNeighbours({ sha: 't', commitDate: day(10) }, list).map((n) => n.sha)).toEqual(['earlier', 'later']);
    const many = Array.from({ length: 15 }, (_, i) => verified(i + 1, `s${i}`, i, script(`s${i}`)));
    expect(orderNeighbours({ sha: 't', commitDate: day(30) }, many, 10)).toHaveLength(10);
    expect(orderNeighbours({ sha: 't', commitDate: day(30) }, many, 10)[0]!.sha).toBe('s14');
  });
});

describe('checkScript', () => {
  it('accepts a plain script and normalizes it (shebang, CRLF, one final newline)', () => {
    const r = checkScript('set -e\r\npip install -e .\r\n\r\n');
    expect(r).toEqual({ ok: true, script: '#!/usr/bin/env bash\nset -e\npip install -e .\n' });
    expect(normalizeScript('#!/bin/bash\necho hi')).toBe('#!/bin/bash\necho hi\n');
  });

  it('rejects markdown fences, literal \\n, empty and oversized scripts', () => {
    const fence = checkScript('```bash\npip install -e .\n```');
    expect(fence.ok).toBe(false);
    expect(!fence.ok && fence.problems.join(' ')).toMatch(/markdown code fence/);
    const escaped = checkScript('#!/bin/bash\\nset -e\\npip install -e .');
    expect(!escaped.ok && escaped.problems.join(' ')).toMatch(/literal "\\n"/);
    expect(checkScript('#!/bin/bash\n   \n').ok).toBe(false);
    expect(checkScript(`echo ${'x'.repeat(40_000)}`).ok).toBe(false);
  });

  it('hashes equal scripts equally whatever their line endings', () => {
    expect(scriptHash('echo a\r\n')).toBe(scriptHash('#!/usr/bin/env bash\necho a\n'));
    expect(scriptHash('echo a')).not.toBe(scriptHash('echo b'));
  });
});

describe('bashSyntaxError (bash -n)', () => {
  it('passes valid bash and reports the line of a syntax error', async () => {
    expect(await bashSyntaxError('#!/bin/bash\nif true; then echo ok; fi\n')).toBeNull();
    const error = await bashSyntaxError('#!/bin/bash\nif true; then\n  echo missing fi\n');
    expect(error).toMatch(/docker_build\.sh: line \d+: syntax error/);
  });
});

describe('choosePython', () => {
  it('reads specifiers as projects mean them', () => {
    expect(satisfiesSpecifier('3.11', '>=3.8')).toBe(true);
    expect(satisfiesSpecifier('3.11', '>=3.8,<3.11')).toBe(false);
    expect(satisfiesSpecifier('3.11', '<3.12')).toBe(true);
    expect(satisfiesSpecifier('3.11', '<=3.11')).toBe(true);
    expect(satisfiesSpecifier('3.11', '==3.11.*')).toBe(true);
    expect(satisfiesSpecifier('3.11', '!=3.11.*')).toBe(false);
    expect(satisfiesSpecifier('3.11', '~=3.8')).toBe(true);
    expect(satisfiesSpecifier('3.11', '~=3.8.1')).toBe(false);
    expect(satisfiesSpecifier('3.11', '>=3.11.4')).toBe(true);
    expect(satisfiesSpecifier('3.11', 'python3')).toBeNull();
  });

  it('takes the newest offered version that satisfies requires-python, preferring classifier versions', () => {
    const offered = ['3.9', '3.10', '3.11', '3.12'];
    expect(choosePython({ requiresPython: '>=3.8,<3.12', classifierVersions: [] }, offered)).toMatchObject({
      version: '3.11',
      satisfiesMetadata: true,
    });
    expect(choosePython({ requiresPython: '>=3.8', classifierVersions: ['3.9', '3.10'] }, offered)).toMatchObject({
      version: '3.10',
      satisfiesMetadata: true,
    });
    expect(choosePython({ requiresPython: null, classifierVersions: ['3.9'] }, offered)).toMatchObject({ version: '3.9' });
    expect(choosePython({ requiresPython: null, classifierVersions: [] }, offered)).toMatchObject({
      version: '3.12',
      satisfiesMetadata: true,
    });
  });

  it('is unavailable when requires-python or the asv config excludes every offered version, naming both', () => {
    const c = choosePython({ requiresPython: '>=3.12', classifierVersions: [] }, ['3.11']);
    expect(c).toEqual({ version: null, reason: 'requires-python ">=3.12" excludes every Python the image offers (3.11)' });
    expect(choosePython({ requiresPython: '>=3.7', classifierVersions: [] }, ['3.11'])).toMatchObject({
      version: '3.11',
      satisfiesMetadata: true,
    });
    expect(choosePython({ requiresPython: '>=3.7', classifierVersions: [] }, ['3.11'], ['3.9'])).toEqual({
      version: null,
      reason: "the asv config's pythons [3.9] excludes every Python the image offers (3.11)",
    });
    expect(choosePython({ requiresPython: '>=3.10', classifierVersions: [] }, ['3.9', '3.11'], ['3.9'])).toEqual({
      version: null,
      reason: 'requires-python ">=3.10" and the asv config\'s pythons [3.9] exclude every Python the image offers (3.9, 3.11)',
    });
  });

  it("takes the asv config's pythons as a preference when the repository says so (xarray: [3.11] on a 3.13 image)", () => {
    const xarray = { requiresPython: '>=3.10', classifierVersions: ['3.10', '3.11', '3.12', '3.13'] };
    expect(choosePython(xarray, ['3.13'], ['3.11'])).toMatchObject({ version: null });
    expect(choosePython(xarray, ['3.13'], ['3.11'], 'prefer')).toEqual({
      version: '3.13',
      satisfiesMetadata: true,
      reason:
        'newest offered version that satisfies requires-python ">=3.10" listed in the classifiers; none of the asv config\'s pythons [3.11] is offered (asvPythons: prefer)',
    });
    // one of them offered: still taken first
    expect(choosePython(xarray, ['3.11', '3.13'], ['3.11'], 'prefer')).toMatchObject({ version: '3.11' });
    // requires-python still binds
    expect(choosePython({ requiresPython: '>=3.14', classifierVersions: [] }, ['3.13'], ['3.11'], 'prefer')).toMatchObject({
      version: null,
    });
  });

  it('takes the newest version the commit allows when the image offers several (asv pythons, requires-python)', () => {
    const offered = ['3.9', '3.10', '3.11', '3.12'];
    expect(choosePython({ requiresPython: '>=3.8', classifierVersions: [] }, offered, ['3.10', '3.11'])).toMatchObject({
      version: '3.11',
      satisfiesMetadata: true,
    });
    expect(choosePython({ requiresPython: null, classifierVersions: [] }, offered, ['3'])).toMatchObject({ version: '3.12' });
    // entries that name no series (an interpreter path, pypy) do not bound anything
    expect(choosePython({ requiresPython: null, classifierVersions: [] }, offered, ['pypy3'])).toMatchObject({ version: '3.12' });
  });
});

describe('groupCandidates and keys', () => {
  const candidate = (repo: string, number: number, baseSha: string, mergedAt: string): ClassifyOutput => ({
    repo,
    number,
    baseSha,
    mergeSha: `${baseSha}m`,
    mergedAt,
    contentHash: 'h',
    classifier: 'heuristic',
    reasoning: '',
    category: null,
    difficulty: null,
    problemStatement: '',
  });

  it('groups candidates by base commit, keeps the earliest merge, orders by repository then time', () => {
    const groups = groupCandidates([
      candidate('b/r', 3, 'bbb', '2024-03-01T00:00:00Z'),
      candidate('a/r', 2, 'aaa', '2024-02-10T00:00:00Z'),
      candidate('a/r', 1, 'aaa', '2024-02-01T00:00:00Z'),
      candidate('a/r', 4, 'ccc', '2024-01-15T00:00:00Z'),
    ]);
    expect(groups.map((g) => [g.repo, g.sha, g.at, g.prs])).toEqual([
      ['a/r', 'ccc', '2024-01-15T00:00:00Z', [4]],
      ['a/r', 'aaa', '2024-02-01T00:00:00Z', [1, 2]],
      ['b/r', 'bbb', '2024-03-01T00:00:00Z', [3]],
    ]);
  });

  it('round-trips owner/name@sha keys', () => {
    const key = commitKey('Owner.x/na-me_', 'abcdef1234567');
    expect(parseCommitKey(key)).toEqual({ repo: 'Owner.x/na-me_', sha: 'abcdef1234567' });
    expect(parseCommitKey('owner/name#12')).toBeNull();
  });

  it('makes valid Docker names; attempt tags are recognised as transient, final ones are not', () => {
    expect(imageSlug('PyData/Pandas_Dev..x')).toBe('pydata-pandas_dev-x');
    const sha = 'a'.repeat(40);
    expect(envImageTag('Owner/Repo', sha)).toBe('perfmine/env-owner-repo:aaaaaaaaaaaa');
    expect(TRANSIENT_TAG_RE.test(attemptImageTag('o/r', sha, 7))).toBe(true);
    expect(TRANSIENT_TAG_RE.test(envImageTag('o/r', sha))).toBe(false);
    expect(repoImageTag('o/r', 'k1')).not.toBe(repoImageTag('o/r', 'k2'));
    expect(repoImageTag('o/r', 'k1')).toMatch(/^perfmine\/repo-o-r:[0-9a-f]{16}$/);
  });
});
