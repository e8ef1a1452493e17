import { describe, expect, it } from 'vitest';
import { classifyFailure, describeFailure, type StepResult } from '../../pipeline/services/environments/failure.js';
import { readTomlTables } from '../../pipeline/concepts/python-project.js';
import { extractFacts, formatFacts } from '../../stages/synthesize/repo-facts.js';
import { chooseTemplate } from '../../stages/synthesize/templates.js';

const step = (over: Partial<StepResult> & Pick<StepResult, 'step'>): StepResult => ({
  ok: false,
  exitCode: 1,
  timedOut: false,
  stdout: '',
  stderr: '',
  durationMs: 1000,
  ...over,
});

describe('classifyFailure', () => {
  it('returns null when every step passed', () => {
    expect(classifyFailure([step({ step: 'build', ok: true, exitCode: 0 }), step({ step: 'import', ok: true, exitCode: 0 })])).toBeNull();
  });

  it('names the first failing step and reads the kind from its logs', () => {
    const header = classifyFailure([
      step({
        step: 'build',
        stderr:
          "      |          ^~~~~~~~~~~\nfixpkg/_speedups.c:3:10: fatal error: _tables.h: No such file or directory\ncompilation terminated.\nerror: command '/usr/bin/x86_64-linux-gnu-gcc' failed with exit code 1\n",
      }),
    ]);
    expect(header).toMatchObject({ step: 'build', kind: 'missing-header', subject: '_tables.h' });
    const module = classifyFailure([
      step({ step: 'build', stdout: "Traceback (most recent call last):\nModuleNotFoundError: No module named 'fixture_buildhelper'\n" }),
    ]);
    expect(module).toMatchObject({ kind: 'missing-module', subject: 'fixture_buildhelper' });
    expect(describeFailure(module!)).toBe("build/missing-module: ModuleNotFoundError: No module named 'fixture_buildhelper'");
    expect(
      classifyFailure([
        step({ step: 'build', stderr: 'ERROR: Could not find a version that satisfies the requirement numpy>=2 (from versions: none)' }),
      ]),
    ).toMatchObject({ kind: 'dependency-resolution' });
    expect(
      classifyFailure([
        step({
          step: 'build',
          stderr: 'WARNING: Retrying ... Failed to establish a new connection: [Errno -3] Temporary failure in name resolution',
        }),
      ]),
    ).toMatchObject({ kind: 'network' });
    expect(classifyFailure([step({ step: 'build', stderr: 'docker_build.sh: line 4: cmake: command not found' })])).toMatchObject({
      kind: 'missing-command',
      subject: 'cmake',
    });
  });

  it('classifies timeouts, tampering, and verification steps without a known pattern', () => {
    expect(classifyFailure([step({ step: 'build', timedOut: true, exitCode: null, durationMs: 3000 })])).toMatchObject({
      kind: 'timeout',
      timedOut: true,
      step: 'build',
    });
    expect(
      classifyFailure([
        step({ step: 'build', ok: true, exitCode: 0 }),
        step({ step: 'tamper', detail: 'the script changed tracked files: benchmarks/bench_core.py (benchmark)' }),
      ]),
    ).toMatchObject({
      step: 'tamper',
      kind: 'tampered',
      headline: 'the script changed tracked files: benchmarks/bench_core.py (benchmark)',
    });
    expect(classifyFailure([step({ step: 'asv', stderr: 'Error: Error importing benchmark module bench_core:\nboom\n' })])).toMatchObject({
      step: 'asv',
      kind: 'asv-discovery',
    });
    expect(classifyFailure([step({ step: 'pytest', stdout: 'ERROR collecting tests/test_x.py\n1 error in 0.1s' })])).toMatchObject({
      step: 'pytest',
      kind: 'pytest-collection',
    });
  });

  it('never takes the marker of a cut log for the line that says what went wrong', () => {
    for (const unit of ['characters', 'bytes']) {
      const failure = classifyFailure([step({ step: 'build', stdout: 'making\n', stderr: `[... 4096 earlier ${unit} cut]\n` })]);
      expect(failure).toMatchObject({ kind: 'unknown', headline: 'making' });
    }
  });
});

const PYPROJECT = `
# comment
[build-system]
requires = [
  "setuptools>=61",   # inline comment
  "wheel",
  "cython>=3",
]
build-backend = "setuptools.build_meta"

[project]
name = "Fancy-Pkg"
requires-python = ">=3.9"
dependencies = ["numpy>=1.22", 'packaging']
classifiers = [
  "Programming Language :: Python :: 3.10",
  "Programming Language :: Python :: 3.11",
  "Programming Language :: C",
]

[tool.setuptools]
package-dir = {"" = "src"}
`;

describe('repository facts', () => {
  it('reads the TOML subset that packaging uses', () => {
    const t = readTomlTables(PYPROJECT);
    expect(t.get('build-system')?.get('requires')).toEqual(['setuptools>=61', 'wheel', 'cython>=3']);
    expect(t.get('tool.setuptools')?.get('package-dir')).toEqual({ '': 'src' });
    expect(t.get('project')?.get('name')).toBe('Fancy-Pkg');
  });

  it('extracts names, backend, requirements, compiled markers and Python metadata from pyproject.toml', () => {
    const paths = [
      'pyproject.toml',
      'setup.py',
      'src/fancy_pkg/__init__.py',
      'src/fancy_pkg/_fast.pyx',
      'src/fancy_pkg/core.c',
      'tests/test_a.py',
      'benchmarks/__init__.py',
      'asv_bench/asv.conf.json',
    ];
    const facts = extractFacts(
      paths,
      new Map([
        ['pyproject.toml', PYPROJECT],
        ['setup.py', 'from setuptools import setup, Extension\nsetup(ext_modules=[Extension("x", ["x.c"])])\n'],
      ]),
    );
    expect(facts).toMatchObject({
      distributionName: 'Fancy-Pkg',
      importName: 'fancy_pkg',
      layout: 'src',
      buildBackend: 'setuptools.build_meta',
      buildRequires: ['setuptools>=61', 'wheel', 'cython>=3'],
      dependencies: ['numpy>=1.22', 'packaging'],
      python: { requiresPython: '>=3.9', classifierVersions: ['3.10', '3.11'] },
      asvConfigPath: 'asv_bench/asv.conf.json',
      testDirs: ['tests'],
    });
    expect(facts.compiledMarkers).toEqual(
      expect.arrayContaining(['setup.py uses Extension(', '1 C/C++ source file(s)', '1 Cython file(s)', 'build requires cython>=3']),
    );
    expect(formatFacts(facts)).toMatch(/import name: fancy_pkg \(layout: src\)/);
  });

  it('reads a legacy setup.py and setup.cfg, and never takes tests or benchmarks for the package', () => {
    const paths = ['setup.py', 'setup.cfg', 'tests/__init__.py', 'benchmarks/__init__.py', 'mylib/__init__.py', 'asv.conf.json'];
    const cfg =
      '[metadata]\nname = mylib\nclassifiers =\n    Programming Language :: Python :: 3.8\n[options]\npython_requires = >=3.6\ninstall_requires =\n    six\n    attrs>=20\n';
    const facts = extractFacts(
      paths,
      new Map([
        ['setup.py', 'from setuptools import setup\nsetup()\n'],
        ['setup.cfg', cfg],
      ]),
    );
    expect(facts).toMatchObject({
      distributionName: 'mylib',
      importName: 'mylib',
      layout: 'flat',
      buildBackend: 'setuptools (legacy setup.py)',
      dependencies: ['six', 'attrs>=20'],
      python: { requiresPython: '>=3.6', classifierVersions: ['3.8'] },
      compiledMarkers: [],
      asvConfigPath: 'asv.conf.json',
    });
    const bare = extractFacts(
      ['setup.py', 'benchmarks/__init__.py', 'tests/__init__.py'],
      new Map([['setup.py', 'setup(name="solo", python_requires=">=3.7")']]),
    );
    expect(bare.importName).toBeNull();
    expect(bare.python.requiresPython).toBe('>=3.7');
  });
});

describe('chooseTemplate', () => {
  const facts = (paths: string[], files: [string, string][] = []) => extractFacts(paths, new Map(files));

  it('offline: an editable install with no build isolation and no dependencies', () => {
    const t = chooseTemplate(facts(['setup.py', 'pkg/__init__.py'], [['setup.py', 'setup(name="pkg")']]), { offline: true });
    expect(t.name).toBe('editable-offline');
    expect(t.script).toContain('"$PY" -m pip install --no-build-isolation --no-deps -e .');
  });

  it('online: installs the extra build requirements first, then the package with its dependencies', () => {
    const t = chooseTemplate(facts(['pyproject.toml', 'pkg/__init__.py'], [['pyproject.toml', PYPROJECT]]), { offline: false });
    expect(t.name).toBe('editable');
    expect(t.script.split('\n')).toEqual(
      expect.arrayContaining([`"$PY" -m pip install 'cython>=3'`, '"$PY" -m pip install --no-build-isolation -e .']),
    );
    expect(t.script).not.toContain("'wheel'");
  });

  it('no packaging metadata: puts the package on the path with a .pth file', () => {
    const t = chooseTemplate(facts(['src/pkg/__init__.py']), { offline: true });
    expect(t.name).toBe('pth-path');
    expect(t.script).toContain('echo /repo/src > "$site/perfmine-repo.pth"');
  });
});
