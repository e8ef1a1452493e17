import type { FileChange } from '../../pipeline/concepts/records/pull-request.js';
import type { Difficulty, OptimizationCategory } from './categories.js';
import { codeOf, diffFiles, type DiffFile } from '../../pipeline/concepts/diff-lines.js';

/**
 * Category and difficulty without a model (`--llm none`), from the diff of the core files. Pure.
 *
 * Category: the first rule that matches, in this order. "Introduced" means more occurrences on
 * the added lines than on the removed ones (comments not counted).
 * 1. compiled code changed (a `.pyx`/`.pxd`/`.c`/`.cpp`/`.h`/`.rs`/`.f90`/`.cu` core file), or
 *    numba/Cython introduced → `use_lower_level_system`;
 * 2. threads, processes, `prange`, `nogil` introduced → `use_parallelization`;
 * 3. a cache introduced (`lru_cache`, `functools.cache`, `cached_property`, memoization, an
 *    assignment to a name with `cache` or `memo` in it) → `cache_and_reuse`;
 * 4. a Python loop removed and NumPy calls introduced → `use_lower_level_system`;
 * 5. a set, frozenset, deque, defaultdict, Counter or heap introduced → `use_better_data_structure_and_layout`;
 * 6. a recursive call removed from its function, or a binary search (`bisect`, `searchsorted`)
 *    introduced → `use_better_algorithm`;
 * 7. mostly removed code (at least twice as many removed lines as added, at most 20 added) →
 *    `remove_or_reduce_work`;
 * otherwise null, with the reason.
 *
 * Difficulty, from the size of the change to core files: `easy` for at most 2 files and 50
 * changed lines; `hard` for more than 400 changed lines, more than 8 files, or a new compiled
 * source file; `medium` otherwise. Null when no core file has a line count (binary changes only).
 */
export interface ChangeShape {
  readonly category: OptimizationCategory | null;
  readonly difficulty: Difficulty | null;
  /** Which rules decided, or why none did. */
  readonly reason: string;
}

const COMPILED = /\.(?:pyx|pxd|pxi|c|cc|cpp|cxx|h|hh|hpp|rs|f|f90|f95|cu)$/i;

interface Rule {
  readonly category: OptimizationCategory;
  readonly test: (s: Sides) => string | null;
}

interface Sides {
  readonly files: readonly DiffFile[];
  readonly added: string;
  readonly removed: string;
  readonly addedLines: number;
  readonly removedLines: number;
}

function count(text: string, re: RegExp): number {
  return (text.match(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`)) ?? []).length;
}

/** The first match of `re` that the added lines have more often than the removed ones. */
function introduced(s: Sides, re: RegExp): string | null {
  const found = new RegExp(re.source, re.flags.replace('g', '')).exec(s.added);
  if (!found) return null;
  return count(s.added, re) > count(s.removed, re) ? found[0] : null;
}

const LOOP = /^\s*(?:async\s+)?for\b[^\n]*\bin\b|^\s*while\b/m;

/** A removed line calls the function that encloses it, and no added line of that hunk does. */
function removedRecursion(files: readonly DiffFile[]): string | null {
  for (const f of files) {
    for (const h of f.hunks) {
      let fn = /^(?:async\s+)?def\s+(\w+)/.exec(h.header.trim())?.[1] ?? null;
      const removedCalls = new Set<string>();
      const addedText = h.lines
        .filter((l) => l.side === 'added')
        .map((l) => codeOf(l.text))
        .join('\n');
      for (const l of h.lines) {
        const def = /^\s*(?:async\s+)?def\s+(\w+)/.exec(l.text);
        if (def && l.side !== 'added') {
          fn = def[1]!;
          continue;
        }
        if (l.side === 'removed' && fn && new RegExp(`(?<![\\w.])${fn}\\(`).test(codeOf(l.text))) removedCalls.add(fn);
      }
      for (const name of removedCalls)
        if (!new RegExp(`(?<![\\w.])${name}\\(`).test(addedText)) return `a recursive call of ${name}() removed`;
    }
  }
  return null;
}

const RULES: readonly Rule[] = [
  {
    category: 'use_lower_level_system',
    test: (s) => {
      const compiled = s.files.filter((f) => COMPILED.test(f.path) && f.hunks.some((h) => h.lines.some((l) => l.side === 'added')));
      if (compiled.length > 0)
        return `compiled code changed (${compiled
          .map((f) => f.path)
          .slice(0, 3)
          .join(', ')})`;
      const m = introduced(s, /@(?:numba\.)?n?jit\b|\bnumba\b|\bcython\b|\bcdef\b/);
      return m ? `${m} introduced` : null;
    },
  },
  {
    category: 'use_parallelization',
    test: (s) => {
      const m = introduced(
        s,
        /\b(?:ThreadPoolExecutor|ProcessPoolExecutor|multiprocessing|concurrent\.futures|joblib|prange|nogil|threading\.Thread)\b/,
      );
      return m ? `${m} introduced` : null;
    },
  },
  {
    category: 'cache_and_reuse',
    test: (s) => {
      const m =
        introduced(s, /\blru_cache\b|\bfunctools\.cache\b|@cache\b|\bcached_property\b|\bmemoi[sz]\w*/) ??
        introduced(s, /\b\w*(?:cache|memo)\w*\s*(?:\[[^\]\n]*\]\s*)?=(?!=)/i);
      return m ? `a cache introduced (${m.replace(/\s*=$/, '').trim()})` : null;
    },
  },
  {
    category: 'use_lower_level_system',
    test: (s) => {
      if (count(s.removed, LOOP) <= count(s.added, LOOP)) return null;
      const m = introduced(s, /\b(?:np|numpy)\.[\w.]+\(/);
      return m ? `a Python loop replaced by NumPy calls (${m.slice(0, -1)})` : null;
    },
  },
  {
    category: 'use_better_data_structure_and_layout',
    test: (s) => {
      const m = introduced(s, /\b(?:frozenset|set|deque|defaultdict|Counter|heapq\.\w+)\(|\.(?:issuperset|issubset|isdisjoint)\b/);
      return m ? `a container introduced (${m.replace(/[(.]/g, '')})` : null;
    },
  },
  {
    category: 'use_better_algorithm',
    test: (s) => {
      const m = introduced(s, /\bbisect(?:_left|_right)?\b|\bsearchsorted\b/);
      return m ? `a binary search introduced (${m})` : removedRecursion(s.files);
    },
  },
  {
    category: 'remove_or_reduce_work',
    test: (s) =>
      s.removedLines >= 2 * Math.max(1, s.addedLines) && s.addedLines <= 20
        ? `mostly removed code (+${s.addedLines} -${s.removedLines})`
        : null,
  },
];

export function changeShape(diff: string, files: readonly FileChange[], coreFiles: readonly string[]): ChangeShape {
  const core = new Set(coreFiles);
  const changed = diffFiles(diff).filter((f) => core.has(f.path) && !f.binary);
  const side = (which: 'added' | 'removed') =>
    changed
      .flatMap((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.side === which).map((l) => codeOf(l.text))))
      .filter((t) => t.trim() !== '');
  const added = side('added');
  const removed = side('removed');
  const sides: Sides = {
    files: changed,
    added: added.join('\n'),
    removed: removed.join('\n'),
    addedLines: added.length,
    removedLines: removed.length,
  };

  let category: OptimizationCategory | null = null;
  let why = 'no rule matched the shape of the change';
  for (const rule of RULES) {
    const matched = rule.test(sides);
    if (matched) {
      category = rule.category;
      why = matched;
      break;
    }
  }

  const counted = files.filter((f) => core.has(f.path) && !f.binary);
  const lines = counted.reduce((n, f) => n + f.additions + f.deletions, 0);
  const newCompiled = counted.some((f) => f.status === 'added' && COMPILED.test(f.path));
  let difficulty: Difficulty | null = null;
  let size = 'no core file with line counts';
  if (counted.length > 0 && lines > 0) {
    size = `${counted.length} core file${counted.length === 1 ? '' : 's'}, ${lines} changed lines${newCompiled ? ', a new compiled source file' : ''}`;
    difficulty = lines > 400 || counted.length > 8 || newCompiled ? 'hard' : counted.length <= 2 && lines <= 50 ? 'easy' : 'medium';
  }
  return {
    category,
    difficulty,
    reason: `heuristic (--llm none): category ${category ?? 'null'}: ${why}; difficulty ${difficulty ?? 'null'}: ${size}`,
  };
}
