import { parsePatch } from './patch.js';

/**
 * What of a change is built, tested and measured: the patch without its changes to the benchmarks
 * (asv's `benchmark_dir`), the asv configuration, the tests (`test_*.py`, `*_test.py`,
 * `conftest.py`, anything under a `tests/` or `test/` directory) and pytest's own configuration
 * files (`pytest.ini`, `.pytest.ini`, `tox.ini` at the root). Both sides keep the base commit's, as
 * the task's verifier (perfmine_verify.py) keeps them for an agent's change: a change that edits
 * a benchmark to do less work, or a test to pass, gains nothing, and the expert is judged by the
 * rules its task will judge agents by. Pure.
 */

export interface ProtectedLayout {
  /** The asv configuration, relative to the checkout. */
  readonly configPath: string;
  /** asv's benchmark_dir, relative to the checkout. */
  readonly benchmarkDir?: string | null;
}

export interface MeasuredPatch {
  /** The patch's sections that are kept, in their order, byte for byte. */
  readonly patch: string;
  /** The paths whose changes were dropped. */
  readonly dropped: readonly string[];
}

export type ChangedKind = 'benchmark' | 'test' | 'asv-config' | 'other';

type ChangedWhere = { readonly asvConfigPath: string | null; readonly benchmarkDir: string | null; readonly testDirs: readonly string[] };

/** What a changed path is: a benchmark, a test, the asv configuration, or something else. */
export function changedKind(path: string, where: ChangedWhere): ChangedKind {
  if (where.asvConfigPath && path === where.asvConfigPath) return 'asv-config';
  if (where.benchmarkDir && (path === where.benchmarkDir || path.startsWith(`${where.benchmarkDir}/`))) return 'benchmark';
  if (where.testDirs.some((d) => path.startsWith(`${d}/`)) || /(^|\/)(test_[^/]*|[^/]*_test)\.py$|(^|\/)conftest\.py$/.test(path))
    return 'test';
  return 'other';
}

/** What each changed path is (changedKind), as the tamper check reports them. */
export function categorizeChanged(paths: readonly string[], where: ChangedWhere): { path: string; kind: ChangedKind }[] {
  return paths.map((path) => ({ path, kind: changedKind(path, where) }));
}

const TEST_DIR = /(^|\/)tests?\//;
const PYTEST_CONFIG = /^(pytest\.ini|\.pytest\.ini|tox\.ini)$/;

/**
 * A folder relative to the checkout with its `.` and `..` segments resolved (`asv_bench/../benchmarks/`
 * is `benchmarks`): '' is the checkout itself; a folder outside it keeps its leading `..`.
 */
function resolvedFolder(dir: string): string {
  const parts: string[] = [];
  for (const part of dir.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}

/**
 * Whether a change to this path (relative to the checkout) is the base's on both sides: what the
 * tamper check calls the asv config, a benchmark or a test file (changedKind), and also a
 * file under a `tests/` or `test/` directory at any depth and pytest's own config files. The
 * benchmark directory is taken as the verifier takes it (python/perfmine_verify.py: the harness's
 * path made relative to the checkout; test/python/protected-paths-parity.test.ts): its `..`
 * segments resolved, nothing when it is outside the checkout, everything when it is the checkout.
 */
export function isProtectedPath(path: string, layout: ProtectedLayout): boolean {
  const resolved = layout.benchmarkDir == null ? null : resolvedFolder(layout.benchmarkDir);
  if (resolved === '') return true;
  const benchmarkDir = resolved === null || resolved === '..' || resolved.startsWith('../') ? null : resolved;
  const kind = changedKind(path, { asvConfigPath: layout.configPath, benchmarkDir, testDirs: [] });
  return kind !== 'other' || TEST_DIR.test(path) || PYTEST_CONFIG.test(path);
}

/** The patch without the sections that change a protected path (on either side of a rename). */
export function measuredPatch(patch: string, layout: ProtectedLayout): MeasuredPatch {
  const sections = parsePatch(patch);
  const protectedSection = (s: (typeof sections)[number]) =>
    isProtectedPath(s.path, layout) || (s.previousPath !== null && isProtectedPath(s.previousPath, layout));
  const dropped = sections.filter(protectedSection);
  if (dropped.length === 0) return { patch, dropped: [] };
  return {
    patch: sections
      .filter((s) => !protectedSection(s))
      .map((s) => s.text)
      .join(''),
    dropped: dropped.map((s) => s.path),
  };
}
