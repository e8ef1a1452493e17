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
 *   script), none. A hunk there that only adds new definitions or imports (nothing removed but
 *   blanks and comments) changes nothing existing code runs: the functions that call the new code
 *   are changed elsewhere in the patch.
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
 * the hash alone took about 90 s a round beside one selected workload of a few seconds).
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
}

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
function changedLines(
  hunk: DiffHunk,
): { readonly at: number; readonly side: 'added' | 'removed'; readonly text: string; readonly run: number }[] {
  let old = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart;
  let run = 0;
  const out: { at: number; side: 'added' | 'removed'; text: string; run: number }[] = [];
  for (const line of hunk.lines) {
    if (line.side === 'context') {
      old += 1;
      run += 1;
    } else if (line.side === 'removed') {
      out.push({ at: old, side: 'removed', text: line.text, run });
      old += 1;
    } else out.push({ at: /^\s+\S/.test(line.text) ? old - 1 : old - 0.5, side: 'added', text: line.text, run });
  }
  return out;
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
 * of 305 lines), and the first module-level line it changes that is code: not blank, not a
 * comment, and not a definition or import it adds (a new `def`, `class`, decorator or import
 * line, or an indented line of a new definition's body).
 */
function placeHunk(hunk: DiffHunk, outline: readonly OutlineSpan[]): { functions: OutlineSpan[]; moduleLevel: number | null } {
  const functions: OutlineSpan[] = [];
  let moduleLevel: number | null = null;
  // the run of added lines a new module-level definition opened: its body is its own, not the
  // function before it (an indented added line otherwise goes with the base line before it)
  let newDefinition: number | null = null;
  for (const line of changedLines(hunk)) {
    const code = codeOf(line.text);
    const closing = /^[)\]}]+(\s*->\s*[^:]+)?\s*:?\s*$/.test(code);
    if (line.side === 'added' && /^(def |async def |class |@)/.test(code)) {
      newDefinition = line.run;
      continue;
    }
    if (newDefinition === line.run && line.side === 'added' && (code.trim() === '' || /^\s/.test(code) || closing)) continue;
    newDefinition = null;
    const fn = functionAt(line.at, outline);
    if (fn) {
      if (!functions.includes(fn)) functions.push(fn);
      continue;
    }
    if (code.trim() === '') continue;
    if (line.side === 'added' && (/^\s/.test(code) || /^(import |from \S+ import )/.test(code))) continue;
    // brackets closing a statement begun on another line are that statement's, placed by its first line
    if (line.side === 'added' && closing) continue;
    moduleLevel ??= Math.ceil(line.at);
  }
  return { functions, moduleLevel };
}

/**
 * The fixed control choice (see the module comment): unselected workloads no slower than the
 * slowest selected one, then those of unknown time, then the slower ones from the fastest; by a
 * hash of their names within a group.
 */
function controlsOf(unselected: readonly Fingerprint[], selected: readonly Fingerprint[], n: number): string[] {
  const known = (f: Fingerprint) => (typeof f.ms === 'number' ? f.ms : null);
  const times = selected.map(known).filter((ms): ms is number => ms !== null);
  const limit = times.length > 0 ? Math.max(...times) : null;
  const rank = (f: Fingerprint): [group: number, ms: number, hash: string] => {
    const ms = known(f);
    const hash = createHash('sha256').update(f.workload).digest('hex');
    if (ms === null || limit === null) return [1, 0, hash];
    return ms <= limit ? [0, 0, hash] : [2, ms, hash];
  };
  const ranked = unselected.map((f) => ({ name: f.workload, key: rank(f) }));
  ranked.sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || (a.key[2] < b.key[2] ? -1 : a.key[2] > b.key[2] ? 1 : 0));
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
  const controls = controlsOf(unselectedPrints, selectedPrints, input.controls);
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
