import { createHash } from 'node:crypto';
import { codeOf, diffFiles, type DiffHunk } from '../../pipeline/concepts/diff-lines.js';

/**
 * Workload selection by coverage: which workloads the expert patch can affect, from what each
 * workload executed at the base commit (its fingerprint: the code objects one call of it ran,
 * recorded by the harness) and where the patch changes the base's code. Pure.
 *
 * - A hunk inside a function (the innermost `def` around its base-side lines, from the file's
 *   outline at the base) touches that function; a workload is selected when it executed code
 *   within a touched function's lines (the function itself, or code nested in it).
 * - A hunk at module level or in a class body (outside methods) changes code that runs at import:
 *   in a file the suite imports, every workload is selected; in one it does not import (a test, a
 *   script), none. New definitions, import statements (added, removed or changed), annotations
 *   that leave the value as it was, blanks and comments are not such code: what a workload runs
 *   changes only where a function it calls changes, elsewhere in the patch (placeHunk).
 * - A decorator added to a definition that exists at the base changes that definition: its
 *   function (every method of a decorated class) is touched.
 * - A change under the benchmark directory is ignored: validate and score do not apply it (both
 *   sides run the base's suite; pipeline/concepts/measured-patch.ts).
 * - A changed file that is not Python source: compiled sources and build files select every
 *   workload; documentation and data under docs-like names select none; anything else, every
 *   workload (it may be read at run time).
 * - A workload whose fingerprint failed, or whose code runs out of sight (timeraw), is selected.
 * - When no workload executed any code of the checkout outside the benchmarks, the package does not
 *   run from the checkout (not an editable install): the fingerprints cannot be mapped, and every
 *   workload is selected.
 *
 * A few unselected workloads are measured beside the selected ones as controls, so that the
 * verdict's noise model and calibration see untouched workloads, and so that an unexpected change
 * in one of them is seen: a fixed choice, first those whose fingerprint took no longer than the
 * slowest selected workload's, then those of unknown time, then the rest from the fastest, each
 * group in the order of a hash of their names (controls cost rounds: on networkx five chosen by
 * the hash alone took about 90 s a round beside one selected workload of a few seconds). Before
 * all of that, a control that would add a heavy module to import (one no selected workload needs,
 * whose import took more than HEAVY_IMPORT_SECONDS) comes after every other: every fresh worker
 * process imports the modules still measured, and networkx's benchmark_algorithms builds its
 * graphs at import for 20 s.
 */

/** One executed code object: the real path of its file in the container, and its line range. */
export type CodeSpan = readonly [file: string, first: number, last: number];

export interface Fingerprint {
  readonly workload: string;
  /** Null when fingerprinting failed (the workload is then selected). */
  readonly code: readonly CodeSpan[] | null;
  /** Its code runs in another interpreter (timeraw): selected. */
  readonly opaque: boolean;
  /** How long taking it took (its setup and one traced call), in milliseconds; null or absent: not known. */
  readonly ms?: number | null;
}

/** A file's def and class statements at the base: [kind, qualified name, first line, last line]. */
export type OutlineSpan = readonly [kind: 'def' | 'class', name: string, first: number, last: number];

export interface SelectionInput {
  readonly diff: string;
  /** The checkout in the container (`/repo`). */
  readonly repoDir: string;
  /** The benchmark directory, relative to the checkout (its code is not the package's). */
  readonly benchmarkDir: string;
  /** Outlines of the changed Python files, by path relative to the checkout (null: unreadable at the base). */
  readonly outlines: ReadonlyMap<string, readonly OutlineSpan[] | null>;
  /** Real paths of every module file the suite's import loaded. */
  readonly imported: ReadonlySet<string>;
  readonly fingerprints: readonly Fingerprint[];
  /** Unselected workloads measured as controls. */
  readonly controls: number;
  /**
   * Each workload's benchmark module and the seconds its own import took, when the harness said:
   * a control from a module no selected workload needs, slow to import, is chosen last (the
   * measurement's fresh worker processes import only the modules still measured).
   */
  readonly modules?: ReadonlyMap<string, { readonly module: string; readonly importSeconds: number }>;
}

/** A module whose own import takes longer than this is a heavy one to import for a control alone. */
export const HEAVY_IMPORT_SECONDS = 1;

export interface TouchedFunction {
  readonly file: string;
  readonly name: string;
  readonly first: number;
  readonly last: number;
}

export interface Selection {
  /** `coverage`: only the selected workloads (and controls) are measured; `all`: every workload. */
  readonly mode: 'coverage' | 'all';
  /** Why every workload is measured, or what the patch touches. */
  readonly reason: string;
  readonly selected: readonly string[];
  readonly controls: readonly string[];
  readonly skipped: readonly string[];
  readonly touched: readonly TouchedFunction[];
}

const DOC_LIKE = /(^|\/)(docs?|doc_src|examples?|\.github)\/|\.(md|rst|txt|png|jpe?g|gif|svg|html?|css|ipynb)$/i;
const REQUIREMENTS = /(^|\/)requirements[^/]*\.txt$/i;

/** A module-level string literal statement's opening: optional prefix, then a triple quote. */
const STRING_STATEMENT = /^[rRuU]?("""|''')/;

/**
 * Which lines of one side of a hunk that starts at the top of its file are inert at module
 * level: blank, comments, or the lines of a triple-quoted string standing alone as a statement
 * (the module docstring). Null for a side the scan cannot follow (an unclosed string).
 */
function inertLines(lines: readonly string[]): boolean[] | null {
  const inert: boolean[] = [];
  let quote: string | null = null;
  for (const text of lines) {
    if (quote !== null) {
      const end = text.indexOf(quote);
      if (end < 0) {
        inert.push(true);
        continue;
      }
      // the closing quote: nothing but a comment may follow it
      inert.push(codeOf(text.slice(end + 3)).trim() === '');
      quote = null;
      continue;
    }
    if (codeOf(text).trim() === '') {
      inert.push(true);
      continue;
    }
    const open = STRING_STATEMENT.exec(text);
    if (!open) {
      inert.push(false);
      continue;
    }
    const q = open[1]!;
    const close = text.indexOf(q, open[0].length);
    if (close < 0) {
      inert.push(true);
      quote = q;
    } else inert.push(codeOf(text.slice(close + 3)).trim() === '');
  }
  return quote === null ? inert : null;
}

/**
 * A hunk at the top of its file (both sides from line 1, so the scan starts outside any string)
 * that changes only the module docstring, comments or blank lines: nothing a workload runs.
 * networkx #8715 reworded leiden.py's docstring; taken for module-level code, it had every one of
 * the suite's 291 workloads measured.
 */
function onlyChangesModuleDocstring(hunk: DiffHunk): boolean {
  if (hunk.oldStart > 1) return false;
  const base = hunk.lines.filter((l) => l.side !== 'added');
  const next = hunk.lines.filter((l) => l.side !== 'removed');
  const baseInert = inertLines(base.map((l) => l.text));
  const nextInert = inertLines(next.map((l) => l.text));
  if (baseInert === null || nextInert === null) return false;
  return base.every((l, i) => l.side !== 'removed' || baseInert[i]) && next.every((l, i) => l.side !== 'added' || nextInert[i]);
}

/**
 * Where each line a hunk changes sits in the base file: a removed line at its own line; an added
 * line between two base lines (k - 0.5), or, indented, with the base line before it (a statement
 * added at the end of a function's body belongs to that function). Context lines are left out:
 * they reach past the function a change is in (the blank lines after its last statement; on
 * shapely #1961 an edit of a function's last lines was taken for a module-level change).
 */
function changedLines(hunk: DiffHunk): ChangedLine[] {
  let old = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart;
  let run = 0;
  const out: ChangedLine[] = [];
  hunk.lines.forEach((line, index) => {
    if (line.side === 'context') {
      old += 1;
      run += 1;
    } else if (line.side === 'removed') {
      out.push({ at: old, side: 'removed', text: line.text, run, index });
      old += 1;
    } else out.push({ at: /^\s+\S/.test(line.text) ? old - 1 : old - 0.5, side: 'added', text: line.text, run, index });
  });
  return out;
}

interface ChangedLine {
  /** Where it sits in the base file (see changedLines). */
  readonly at: number;
  readonly side: 'added' | 'removed';
  readonly text: string;
  /** How many context lines come before it in the hunk: a run of changed lines shares it. */
  readonly run: number;
  /** Its place in the hunk's lines. */
  readonly index: number;
}

/** The start of an import statement (`import x`, `from x import y`), or a TYPE_CHECKING guard of imports. */
const IMPORT_START = /^(import\s|from\s+\S+\s+import\b)/;
const TYPE_CHECKING_GUARD = /^if\s+(typing\.)?TYPE_CHECKING\s*:$/;

/**
 * The hunk's lines (by index) that belong to an import statement on their own side: the lines of
 * `import ...` and `from ... import ...` statements, a parenthesised list or backslash
 * continuation included, at any indentation (imports in a TYPE_CHECKING guard or a try block),
 * and the guard's `if TYPE_CHECKING:` line. Each side is scanned with its context lines, so that
 * a list begun on a context line is followed; a hunk that starts inside a list it cannot see the
 * start of leaves those lines out (they count as code).
 */
function importLines(hunk: DiffHunk): Set<number> {
  const members = new Set<number>();
  for (const side of ['removed', 'added'] as const) {
    let open = false;
    let continued = false;
    hunk.lines.forEach((line, index) => {
      if (line.side !== 'context' && line.side !== side) return;
      const code = codeOf(line.text).trim();
      if (open || continued) {
        members.add(index);
        if (open && code.includes(')')) open = false;
        continued = code.endsWith('\\');
        return;
      }
      if (TYPE_CHECKING_GUARD.test(code)) members.add(index);
      if (!IMPORT_START.test(code)) return;
      members.add(index);
      open = code.includes('(') && !code.includes(')');
      continued = code.endsWith('\\');
    });
  }
  return members;
}

/**
 * A module-level annotated assignment as it runs: `NAME: TYPE = VALUE` as `NAME = VALUE`, and a
 * bare `NAME: TYPE` as nothing (''), at column 0 only (in a class body an annotation makes a
 * dataclass field, and an indented `key: value` line may be a dict's entry). Null: not one.
 */
function withoutAnnotation(text: string): string | null {
  const code = codeOf(text).trimEnd();
  const assigned = /^([A-Za-z_]\w*)\s*:(?!=)\s*[^=]+?\s*=(?!=)\s*(.+)$/.exec(code);
  if (assigned) return `${assigned[1]} = ${assigned[2]}`;
  const plain = /^([A-Za-z_]\w*)\s*=(?!=)\s*(.+)$/.exec(code);
  if (plain) return `${plain[1]} = ${plain[2]}`;
  return /^[A-Za-z_]\w*\s*:(?!=)\s*[^=]+$/.test(code) ? '' : null;
}

/**
 * The hunk's module-level lines (by index) that change only annotations: removed and added
 * assignments equal once their annotations are taken away (each matched once), and bare
 * annotations. What the module runs is the same.
 */
function annotationOnlyLines(lines: readonly ChangedLine[]): Set<number> {
  const out = new Set<number>();
  const removed = new Map<string, number[]>();
  for (const l of lines) {
    const plain = l.side === 'removed' ? withoutAnnotation(l.text) : null;
    if (plain === '') out.add(l.index);
    else if (plain !== null) removed.set(plain, [...(removed.get(plain) ?? []), l.index]);
  }
  for (const l of lines) {
    if (l.side !== 'added') continue;
    const plain = withoutAnnotation(l.text);
    if (plain === '') out.add(l.index);
    if (!plain) continue;
    const match = removed.get(plain);
    if (!match || match.length === 0) continue;
    out.add(l.index);
    out.add(match.shift()!);
  }
  return out;
}

/** The definition an added decorator decorates when that definition exists at the base: the base line of the hunk's next existing line, when that is a `def`, `class` or decorator. */
function decoratedBaseLine(hunk: DiffHunk, line: ChangedLine): number | null {
  let old = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart;
  for (let i = 0; i < hunk.lines.length; i++) {
    const l = hunk.lines[i]!;
    if (i > line.index) {
      if (l.side === 'removed') return null;
      if (l.side === 'added') {
        if (/^\s*@/.test(codeOf(l.text))) continue;
        return null;
      }
      return /^\s*(def |async def |class |@)/.test(codeOf(l.text)) ? old : null;
    }
    if (l.side !== 'added') old += 1;
  }
  return null;
}

/** The innermost `def` whose lines hold line `at`. */
function functionAt(at: number, outline: readonly OutlineSpan[]): OutlineSpan | null {
  let best: OutlineSpan | null = null;
  for (const span of outline) {
    if (span[0] !== 'def' || span[2] > at || span[3] < at) continue;
    if (best === null || span[3] - span[2] < best[3] - best[2]) best = span;
  }
  return best;
}

/**
 * The functions a hunk changes, each changed line placed on its own (a hunk may run across
 * several functions: networkx #8715 rewrote the end of one and the helpers after it in one hunk
 * of 305 lines), and the first module-level line it changes that is code. Not code: blank lines,
 * comments, a definition it adds (a new `def`, `class`, decorator, or an indented line of a new
 * definition's body), the lines of import statements it adds, removes or changes (what a
 * workload runs is the code of the functions it calls: a function that uses a name the patch
 * imports is changed elsewhere in the patch), and module-level annotations it adds, removes or
 * changes where the value assigned stays the same. A decorator added to a definition that exists
 * at the base changes that definition (every method of a class it decorates): those functions
 * are touched, the rest of the module is not.
 */
function placeHunk(hunk: DiffHunk, outline: readonly OutlineSpan[]): { functions: OutlineSpan[]; moduleLevel: number | null } {
  const functions: OutlineSpan[] = [];
  const touch = (fn: OutlineSpan) => {
    if (!functions.includes(fn)) functions.push(fn);
  };
  let moduleLevel: number | null = null;
  const lines = changedLines(hunk);
  const imports = importLines(hunk);
  const annotations = annotationOnlyLines(lines.filter((l) => functionAt(l.at, outline) === null));
  // the run of added lines a new module-level definition opened: its body is its own, not the
  // function before it (an indented added line otherwise goes with the base line before it)
  let newDefinition: number | null = null;
  for (const line of lines) {
    const code = codeOf(line.text);
    const closing = /^[)\]}]+(\s*->\s*[^:]+)?\s*:?\s*$/.test(code);
    if (line.side === 'added' && /^\s*@/.test(code)) {
      const decorated = decoratedBaseLine(hunk, line);
      if (decorated !== null) {
        const spans = definitionsAt(decorated, outline);
        if (spans === null) moduleLevel ??= Math.ceil(line.at);
        else spans.forEach(touch);
        continue;
      }
    }
    if (line.side === 'added' && /^(def |async def |class |@)/.test(code)) {
      newDefinition = line.run;
      continue;
    }
    if (newDefinition === line.run && line.side === 'added' && (code.trim() === '' || /^\s/.test(code) || closing)) continue;
    newDefinition = null;
    const fn = functionAt(line.at, outline);
    if (fn) {
      touch(fn);
      continue;
    }
    if (code.trim() === '' || imports.has(line.index) || annotations.has(line.index)) continue;
    if (line.side === 'added' && /^\s/.test(code)) continue;
    // brackets closing a statement begun on another line are that statement's, placed by its first line
    if (line.side === 'added' && closing) continue;
    moduleLevel ??= Math.ceil(line.at);
  }
  return { functions, moduleLevel };
}

/**
 * The functions a definition whose header holds base line `at` (a decorator, or its `def` or
 * `class` line) makes: the function itself, or every method of a class (the innermost definition
 * holding the line); null when no definition holds it.
 */
function definitionsAt(at: number, outline: readonly OutlineSpan[]): OutlineSpan[] | null {
  let best: OutlineSpan | null = null;
  for (const span of outline) {
    if (span[2] > at || span[3] < at) continue;
    if (best === null || span[2] > best[2] || (span[2] === best[2] && span[3] - span[2] < best[3] - best[2])) best = span;
  }
  if (best === null) return null;
  if (best[0] === 'def') return [best];
  const cls = best;
  return outline.filter((span) => span[0] === 'def' && span[2] >= cls[2] && span[3] <= cls[3]);
}

/**
 * The fixed control choice (see the module comment): heavy imports last; then unselected
 * workloads no slower than the slowest selected one, then those of unknown time, then the slower
 * ones from the fastest; by a hash of their names within a group.
 */
function controlsOf(
  unselected: readonly Fingerprint[],
  selected: readonly Fingerprint[],
  n: number,
  modules: SelectionInput['modules'],
): string[] {
  const known = (f: Fingerprint) => (typeof f.ms === 'number' ? f.ms : null);
  const times = selected.map(known).filter((ms): ms is number => ms !== null);
  const limit = times.length > 0 ? Math.max(...times) : null;
  const needed = new Set(selected.map((f) => modules?.get(f.workload)?.module));
  const heavy = (f: Fingerprint) => {
    const m = modules?.get(f.workload);
    return m !== undefined && !needed.has(m.module) && m.importSeconds > HEAVY_IMPORT_SECONDS ? 1 : 0;
  };
  const rank = (f: Fingerprint): [heavy: number, group: number, ms: number, hash: string] => {
    const ms = known(f);
    const hash = createHash('sha256').update(f.workload).digest('hex');
    if (ms === null || limit === null) return [heavy(f), 1, 0, hash];
    return ms <= limit ? [heavy(f), 0, 0, hash] : [heavy(f), 2, ms, hash];
  };
  const ranked = unselected.map((f) => ({ name: f.workload, key: rank(f) }));
  ranked.sort(
    (a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2] || (a.key[3] < b.key[3] ? -1 : a.key[3] > b.key[3] ? 1 : 0),
  );
  return ranked.slice(0, n).map((r) => r.name);
}

export function selectWorkloads(input: SelectionInput): Selection {
  const names = input.fingerprints.map((f) => f.workload);
  const all = (reason: string, touched: TouchedFunction[] = []): Selection => ({
    mode: 'all',
    reason,
    selected: names,
    controls: [],
    skipped: [],
    touched,
  });
  const root = input.repoDir.endsWith('/') ? input.repoDir : `${input.repoDir}/`;
  const benchDir = `${root}${input.benchmarkDir.replace(/\/+$/, '')}/`;

  const packageRuns = input.fingerprints.some((f) => f.code?.some(([file]) => file.startsWith(root) && !file.startsWith(benchDir)));
  if (!packageRuns)
    return all(
      'no workload ran code of the checkout outside the benchmarks (the package is not installed in editable mode?): fingerprints cannot be mapped',
    );

  const touched: TouchedFunction[] = [];
  for (const file of diffFiles(input.diff)) {
    const path = file.previousPath ?? file.path;
    // the benchmarks are the base's on both sides (measured-patch.ts): a change there is not applied
    if (`${root}${path}`.startsWith(benchDir) || `${root}${file.path}`.startsWith(benchDir)) continue;
    if (file.binary) return all(`a binary file changed: ${path}`);
    if (!/\.pyi?$/.test(path)) {
      if (REQUIREMENTS.test(path) || !DOC_LIKE.test(path)) return all(`a file that is not Python source changed: ${path}`);
      continue;
    }
    if (file.status === 'added') continue; // a new module changes nothing the base runs by itself
    const outline = input.outlines.get(path);
    if (outline === undefined || outline === null) return all(`the base's ${path} could not be read to place the changes`);
    const absolute = `${root}${path}`;
    for (const hunk of file.hunks) {
      if (onlyChangesModuleDocstring(hunk)) continue;
      const placed = placeHunk(hunk, outline);
      for (const fn of placed.functions)
        if (!touched.some((t) => t.file === absolute && t.first === fn[2]))
          touched.push({ file: absolute, name: fn[1], first: fn[2], last: fn[3] });
      if (placed.moduleLevel === null || !input.imported.has(absolute)) continue;
      return all(`module-level code changed in ${path} (line ${placed.moduleLevel}), which the suite imports`, touched);
    }
  }

  const runsTouched = (f: Fingerprint) =>
    f.code === null ||
    f.opaque ||
    f.code.some(([file, first, last]) => touched.some((t) => t.file === file && first <= t.last && last >= t.first));
  const selectedPrints = input.fingerprints.filter(runsTouched);
  const selected = selectedPrints.map((f) => f.workload);
  const touchedNames = [...new Set(touched.map((t) => `${t.file.slice(root.length)}:${t.name}`))];
  const touchedText =
    touchedNames.length > 6 ? `${touchedNames.slice(0, 6).join(', ')} and ${touchedNames.length - 6} more` : touchedNames.join(', ');
  if (selected.length === names.length)
    return all(touched.length > 0 ? `every workload runs the changed code (${touchedText})` : 'every workload is selected', touched);
  const unselectedPrints = input.fingerprints.filter((f) => !selected.includes(f.workload));
  const unselected = unselectedPrints.map((f) => f.workload);
  const controls = controlsOf(unselectedPrints, selectedPrints, input.controls, input.modules);
  return {
    mode: 'coverage',
    reason:
      selected.length > 0
        ? `${selected.length} of ${names.length} workloads run the changed code (${touchedText})`
        : `the patch changes no code any workload runs${touched.length > 0 ? ` (it changes ${touchedText})` : ''}`,
    selected,
    controls,
    skipped: unselected.filter((n) => !controls.includes(n)),
    touched,
  };
}
