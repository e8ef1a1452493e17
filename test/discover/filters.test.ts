import { describe, expect, it } from 'vitest';
import { judgeMetadata, judgePython } from '../../stages/discover/filters.js';
import { specifierAllowsAtLeast } from '../../pipeline/concepts/pep440.js';
import { declaredRequiresPython as findRequiresPython } from '../../pipeline/concepts/python-project.js';
import { classifierMinors, readPythonSupport } from '../../stages/discover/python-version.js';

const rules = { minStars: 100, maxInactiveYears: 3, minPython: '3.8' };
const asOf = new Date('2025-05-01T00:00:00Z');
const facts: { stars: number; fork: boolean; archived: boolean; disabled: boolean; pushedAt: string | null } = {
  stars: 500,
  fork: false,
  archived: false,
  disabled: false,
  pushedAt: '2025-04-01T00:00:00Z',
};

describe('repository filters (pure)', () => {
  it('keeps an active, starred, original repository', () => {
    expect(judgeMetadata(facts, rules, asOf)).toEqual({ keep: true });
  });

  it('drops with a reason: disabled, archived, fork, few stars, inactive', () => {
    const reason = (f: Partial<typeof facts>) => {
      const v = judgeMetadata({ ...facts, ...f }, rules, asOf);
      return v.keep ? 'kept' : v.reason;
    };
    expect(reason({ disabled: true })).toBe('repo-disabled');
    expect(reason({ archived: true })).toBe('repo-archived');
    expect(reason({ fork: true })).toBe('repo-fork');
    expect(reason({ stars: 99 })).toBe('too-few-stars');
    expect(reason({ stars: 100 })).toBe('kept');
    expect(reason({ pushedAt: '2022-04-30T00:00:00Z' })).toBe('inactive');
    expect(reason({ pushedAt: '2022-05-01T00:00:00Z' })).toBe('kept');
    expect(reason({ pushedAt: null })).toBe('inactive');
  });

  it('evaluates PEP 440 specifiers against Python >= 3.8', () => {
    expect(specifierAllowsAtLeast('>=3.6', 8)).toBe(true);
    expect(specifierAllowsAtLeast('>=2.7, !=3.0.*, !=3.1.*', 8)).toBe(true);
    expect(specifierAllowsAtLeast('<3.8', 8)).toBe(false);
    expect(specifierAllowsAtLeast('>=3.5,<3.8.1', 8)).toBe(true);
    expect(specifierAllowsAtLeast('==2.7.*', 8)).toBe(false);
    expect(specifierAllowsAtLeast('~=3.6', 8)).toBe(true);
    expect(specifierAllowsAtLeast('~=3.6.1', 8)).toBe(false);
    expect(specifierAllowsAtLeast('>3.7', 8)).toBe(true);
    expect(specifierAllowsAtLeast('whatever', 8)).toBeNull();
  });

  it('reads requires-python, python_requires and classifiers', () => {
    expect(findRequiresPython({ pyproject: '[project]\nname = "x"\nrequires-python = ">=3.10"\n' })).toEqual({
      spec: '>=3.10',
      from: 'requires-python',
    });
    expect(findRequiresPython({ setupCfg: '[options]\npython_requires = >=3.6\n' })).toEqual({ spec: '>=3.6', from: 'python_requires' });
    expect(findRequiresPython({ setupPy: 'setup(name="x", python_requires=">=2.7, <3")' })).toEqual({
      spec: '>=2.7, <3',
      from: 'python_requires',
    });
    expect(
      classifierMinors({
        setupPy:
          'setup(classifiers=[\n"Programming Language :: Python :: 3.6",\n"Programming Language :: Python :: 3.7",\n"Programming Language :: Python :: 2.7"])',
      }),
    ).toEqual([6, 7]);
    expect(readPythonSupport({ setupPy: 'python_requires="<3.8"' }, '3.8')).toEqual({ supported: false, evidence: 'python_requires <3.8' });
    expect(readPythonSupport({ setupCfg: '[metadata]\nclassifiers =\n  Programming Language :: Python :: 3.7\n' }, '3.8')).toEqual({
      supported: false,
      evidence: 'classifiers 3.7',
    });
    expect(readPythonSupport({ pyproject: '[project]\nclassifiers = ["Programming Language :: Python :: 3.12"]' }, '3.8').supported).toBe(
      true,
    );
    expect(readPythonSupport({}, '3.8')).toEqual({ supported: null, evidence: null });
    expect(judgePython({ supported: null, evidence: null }, rules)).toEqual({ keep: true });
    expect(judgePython({ supported: false, evidence: 'requires-python <3.8' }, rules)).toMatchObject({
      keep: false,
      reason: 'python-too-old',
    });
  });
});
