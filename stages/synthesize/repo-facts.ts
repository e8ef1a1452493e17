import {
  asList,
  asString,
  iniList,
  pythonMetadataOf,
  readIni,
  readTomlTables,
  setupPyList,
  setupPyString,
  type PythonMetadata,
  type TomlValue,
} from '../../pipeline/concepts/python-project.js';

/**
 * Facts about a repository at one commit, read from its file list and a few packaging files:
 * what the build agent is shown, what templates and the Python choice are decided on, and what
 * verification imports. Pure (the caller reads the files).
 */
export interface RepoFacts {
  /** Distribution name from pyproject.toml, setup.cfg or setup.py. */
  readonly distributionName: string | null;
  /** The top-level package verification imports. */
  readonly importName: string | null;
  /** `src` when the package lives under src/. */
  readonly layout: 'flat' | 'src' | 'unknown';
  readonly packagingFiles: readonly string[];
  /** `[build-system] build-backend`, or `setuptools (legacy setup.py)` when there is only a setup.py. */
  readonly buildBackend: string | null;
  readonly buildRequires: readonly string[];
  readonly dependencies: readonly string[];
  /** Why the project seems to compile code: `setup.py uses Extension(`, `3 C sources`, `meson.build`, ... */
  readonly compiledMarkers: readonly string[];
  readonly python: PythonMetadata;
  /** Path of the asv configuration, when there is one. */
  readonly asvConfigPath: string | null;
  readonly testDirs: readonly string[];
}

/** The files whose text the facts are read from (when they exist). */
export const FACT_FILES = ['pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'] as const;

const NOT_PACKAGES = new Set([
  'test',
  'tests',
  'testing',
  'benchmarks',
  'benchmark',
  'bench',
  'asv_bench',
  'docs',
  'doc',
  'examples',
  'example',
  'tools',
  'scripts',
  'ci',
  'build',
  'dist',
  'site-packages',
  'conftest',
]);

// ---- the facts ---------------------------------------------------------------------------------

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '_');
}

/**
 * Facts from the tree listing (every tracked path at the commit) and the texts of FACT_FILES
 * found at the repository root.
 */
export function extractFacts(paths: readonly string[], files: ReadonlyMap<string, string>): RepoFacts {
  const pyproject = files.get('pyproject.toml');
  const setupPy = files.get('setup.py');
  const setupCfg = files.get('setup.cfg');
  const requirements = files.get('requirements.txt');
  const toml = pyproject ? readTomlTables(pyproject) : new Map<string, Map<string, TomlValue>>();
  const project = toml.get('project') ?? new Map<string, TomlValue>();
  const buildSystem = toml.get('build-system');
  const cfg = setupCfg ? readIni(setupCfg) : new Map<string, Map<string, string>>();
  const poetry = toml.get('tool.poetry');

  const distributionName =
    asString(project.get('name')) ??
    asString(poetry?.get('name')) ??
    cfg.get('metadata')?.get('name') ??
    (setupPy ? setupPyString(setupPy, 'name') : null) ??
    null;

  const packagingFiles = [
    'pyproject.toml',
    'setup.py',
    'setup.cfg',
    'meson.build',
    'CMakeLists.txt',
    'requirements.txt',
    'environment.yml',
    'Makefile',
  ].filter((f) => paths.includes(f));

  let buildBackend = asString(buildSystem?.get('build-backend'));
  if (!buildBackend && setupPy) buildBackend = 'setuptools (legacy setup.py)';
  const buildRequires = asList(buildSystem?.get('requires'));

  const dependencies = [
    ...asList(project.get('dependencies')),
    ...iniList(cfg.get('options')?.get('install_requires')),
    ...(setupPy ? setupPyList(setupPy, 'install_requires') : []),
  ];
  if (dependencies.length === 0 && requirements) {
    dependencies.push(
      ...requirements
        .split(/\r?\n/)
        .map((l) => l.replace(/#.*/, '').trim())
        .filter((l) => l && !l.startsWith('-')),
    );
  }

  // Packages: directories holding an __init__.py, at the root or under src/.
  const packageDirs = new Map<string, 'flat' | 'src'>();
  for (const p of paths) {
    const flat = /^([A-Za-z_][\w]*)\/__init__\.py$/.exec(p);
    if (flat && !NOT_PACKAGES.has(flat[1]!.toLowerCase())) packageDirs.set(flat[1]!, 'flat');
    const src = /^src\/([A-Za-z_][\w]*)\/__init__\.py$/.exec(p);
    if (src && !NOT_PACKAGES.has(src[1]!.toLowerCase())) packageDirs.set(src[1]!, 'src');
  }
  const wanted = distributionName ? normalizeName(distributionName) : null;
  let importName: string | null = null;
  if (wanted) importName = [...packageDirs.keys()].find((p) => normalizeName(p) === wanted) ?? null;
  if (!importName && wanted) {
    // A distribution `foo-bar` whose package is `foo` or `bar`; or a single module `foo_bar.py`.
    importName = [...packageDirs.keys()].find((p) => wanted.split('_').includes(normalizeName(p))) ?? null;
    if (!importName && paths.some((p) => normalizeName(p) === `${wanted}_py` || p === `${wanted}.py`)) importName = wanted;
  }
  if (!importName) importName = [...packageDirs.keys()].sort()[0] ?? null;
  const layout = importName ? (packageDirs.get(importName) ?? 'flat') : 'unknown';

  const compiledMarkers: string[] = [];
  if (setupPy) {
    for (const [re, what] of [
      [/\bExtension\s*\(/, 'setup.py uses Extension('],
      [/\bext_modules\b/, 'setup.py sets ext_modules'],
      [/\bcythonize\s*\(/, 'setup.py calls cythonize('],
      [/\bbuild_ext\b/, 'setup.py mentions build_ext'],
    ] as const) {
      if (re.test(setupPy)) compiledMarkers.push(what);
    }
  }
  const count = (re: RegExp) => paths.filter((p) => re.test(p) && !/^(?:tests?|benchmarks?|docs?)\//.test(p)).length;
  const cSources = count(/\.(?:c|cc|cpp|cxx)$/);
  const pyx = count(/\.(?:pyx|pxd)$/);
  if (cSources > 0) compiledMarkers.push(`${cSources} C/C++ source file(s)`);
  if (pyx > 0) compiledMarkers.push(`${pyx} Cython file(s)`);
  if (paths.includes('meson.build')) compiledMarkers.push('meson.build');
  if (paths.includes('CMakeLists.txt')) compiledMarkers.push('CMakeLists.txt');
  if (buildBackend && /mesonpy|scikit_build|maturin|setuptools_rust/.test(buildBackend))
    compiledMarkers.push(`build backend ${buildBackend}`);
  for (const req of buildRequires)
    if (/^(cython|numpy|pybind11|setuptools[-_]rust|nanobind|scikit-build)/i.test(req)) compiledMarkers.push(`build requires ${req}`);

  const asvCandidates = paths
    .filter((p) => /(^|\/)asv\.conf\.jsonc?$/.test(p))
    .sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
  const testDirs = [
    ...new Set(paths.map((p) => /^((?:src\/[\w]+\/)?tests?)\//.exec(p)?.[1]).filter((d): d is string => Boolean(d))),
  ].sort();

  return {
    distributionName,
    importName,
    layout,
    packagingFiles,
    buildBackend,
    buildRequires,
    dependencies,
    compiledMarkers,
    python: pythonMetadataOf({ pyproject: pyproject ?? null, setupCfg: setupCfg ?? null, setupPy: setupPy ?? null }),
    asvConfigPath: asvCandidates[0] ?? null,
    testDirs,
  };
}

/** The facts as the agent reads them. */
export function formatFacts(facts: RepoFacts): string {
  const list = (xs: readonly string[]) => (xs.length > 0 ? xs.join(', ') : '(none)');
  return [
    `distribution name: ${facts.distributionName ?? '(unknown)'}`,
    `import name: ${facts.importName ?? '(unknown)'} (layout: ${facts.layout})`,
    `packaging files: ${list(facts.packagingFiles)}`,
    `build backend: ${facts.buildBackend ?? '(none declared)'}`,
    `build requires: ${list(facts.buildRequires)}`,
    `declared dependencies: ${list(facts.dependencies)}`,
    `compiled-extension markers: ${list(facts.compiledMarkers)}`,
    `requires-python: ${facts.python.requiresPython ?? '(not declared)'}; classifier versions: ${list(facts.python.classifierVersions)}`,
    `asv config: ${facts.asvConfigPath ?? '(not found)'}`,
    `test directories: ${list(facts.testDirs)}`,
  ].join('\n');
}
