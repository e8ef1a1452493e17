import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  parseVersion,
  sameVersion,
  satisfiesSpecifier,
  seriesSatisfies,
  specifierAllowsAtLeast,
} from '../../pipeline/concepts/pep440.js';
import { declaredRequiresPython, pythonMetadataOf } from '../../pipeline/concepts/python-project.js';

describe('PEP 440 specifiers (one module for discover and synthesize)', () => {
  it('compares a version with zero padding, exactly as PEP 440 says', () => {
    expect(satisfiesSpecifier('3.11', '==3.11.0')).toBe(true);
    expect(satisfiesSpecifier('3.11.5', '<=3.11')).toBe(false);
    expect(satisfiesSpecifier('3.11.5', '!=3.11')).toBe(true);
    expect(satisfiesSpecifier('3.11.5', '==3.11.*')).toBe(true);
    expect(satisfiesSpecifier('3.12', '~=3.11')).toBe(true);
    expect(satisfiesSpecifier('4.0', '~=3.11')).toBe(false);
  });

  it('reads no specifier that PEP 440 does not allow', () => {
    expect(satisfiesSpecifier('3.11', '~=3')).toBeNull();
    expect(satisfiesSpecifier('3.11', '>=3.*')).toBeNull();
    expect(satisfiesSpecifier('3.11', 'python3')).toBeNull();
    expect(satisfiesSpecifier('3.11', '')).toBeNull();
    expect(seriesSatisfies('3.11', '~=3')).toBeNull();
    expect(specifierAllowsAtLeast('>=3.8, ~=3', 8)).toBeNull();
  });

  it("synthesize's case: an offered X.Y fits when some release of the series does", () => {
    expect(seriesSatisfies('3.11', '<=3.11')).toBe(true);
    expect(seriesSatisfies('3.11', '==3.11')).toBe(true);
    expect(seriesSatisfies('3.11', '<3.11')).toBe(false);
    expect(seriesSatisfies('3.11', '>=3.11.4')).toBe(true);
    expect(seriesSatisfies('3.11', '>=3.11.4,<3.11.6')).toBe(true);
    expect(seriesSatisfies('3.11', '>3.11.4,<3.11.5')).toBe(false);
    expect(seriesSatisfies('3.11', '!=3.11.*')).toBe(false);
    expect(seriesSatisfies('3.11', '!=3.11')).toBe(true);
    expect(seriesSatisfies('3.12', '>=3.8,<3.12')).toBe(false);
  });

  it("discover's case: some Python >= 3.N satisfies the project's specifier", () => {
    expect(specifierAllowsAtLeast('>=2.7, !=3.0.*, !=3.1.*', 8)).toBe(true);
    expect(specifierAllowsAtLeast('<3.8', 8)).toBe(false);
    expect(specifierAllowsAtLeast('<=3.8', 8)).toBe(true);
    expect(specifierAllowsAtLeast('>=3.5,<3.8.1', 8)).toBe(true);
    expect(specifierAllowsAtLeast('~=3.6.1', 8)).toBe(false);
    expect(specifierAllowsAtLeast('>=3.14', 8)).toBe(true);
  });

  // What the release-only subset before @renovatebot/pep440 got wrong or could not read.
  it('reads the whole of PEP 440: pre-releases, epochs, and specifiers with them', () => {
    // a release candidate comes before its release (the subset read 3.13.0rc1 as 3.13.0)
    expect(satisfiesSpecifier('3.13.0rc1', '>=3.13')).toBe(false);
    expect(satisfiesSpecifier('3.13.0rc1', '>=3.13.0rc1')).toBe(true);
    // an epoch outranks every release (the subset read 1!1.0 as 1)
    expect(satisfiesSpecifier('1!1.0', '>=2')).toBe(true);
    // a specifier naming a pre-release (the subset could not read it)
    expect(seriesSatisfies('3.13', '>=3.13.0b1')).toBe(true);
    expect(seriesSatisfies('3.12', '>=3.13.0b1')).toBe(false);
    expect(specifierAllowsAtLeast('>=3.8.0rc1', 8)).toBe(true);
    // a stray comma is still read, as before
    expect(satisfiesSpecifier('3.11', '>=3.8,')).toBe(true);
  });

  it('says two versions are the same as PEP 440 normalizes them', () => {
    expect(sameVersion('1.0', '1.0.0')).toBe(true);
    expect(sameVersion('1.0-post0', '1.0.post0')).toBe(true);
    expect(sameVersion('1.0RC1', '1.0rc1')).toBe(true);
    expect(sameVersion('v1.0', '1.0')).toBe(true);
    expect(sameVersion('1.0', '1.0.post0')).toBe(false);
    expect(sameVersion('1.0', '1.0.dev0')).toBe(false);
    expect(sameVersion('1.0+local', '1.0')).toBe(false);
    // not versions: equal only when identical (the library throws on them)
    expect(sameVersion('unknown', 'unknown')).toBe(true);
    expect(sameVersion('unknown', '1.0')).toBe(false);
  });

  it('orders and reads release segments as before', () => {
    expect(parseVersion('v3.11.4rc1')).toEqual([3, 11, 4]);
    expect(parseVersion('3.13t')).toEqual([3, 13]);
    expect(parseVersion('python')).toBeNull();
    expect(compareVersions([3, 11], [3, 11, 0])).toBe(0);
    expect(compareVersions([3, 9], [3, 11])).toBeLessThan(0);
  });
});

describe('Python project metadata (one reader for discover and synthesize)', () => {
  it('reads requires-python, python_requires and the classifiers from their own places only', () => {
    expect(declaredRequiresPython({ setupCfg: '[options]\npython_requires = ">=3.9"\n' })).toEqual({
      spec: '>=3.9',
      from: 'python_requires',
    });
    expect(
      pythonMetadataOf({
        pyproject: '[project]\nrequires-python = ">=3.10"\nclassifiers = [\n  "Programming Language :: Python :: 3.11",\n]\n',
      }),
    ).toEqual({
      requiresPython: '>=3.10',
      classifierVersions: ['3.11'],
    });
    // a classifier in a comment or in another table is not a declaration
    expect(
      pythonMetadataOf({
        pyproject: '# Programming Language :: Python :: 3.7\n[tool.x]\nclassifiers = ["Programming Language :: Python :: 3.6"]\n',
      }),
    ).toEqual({
      requiresPython: null,
      classifierVersions: [],
    });
  });
});
