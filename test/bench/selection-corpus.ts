/**
 * The selection's module-level rule on a real repository's history (issue 37): for each of the
 * last N commits that change Python source, the commit's diff against its parent is placed as
 * validate places an expert patch (stages/validate/selection.ts), with the parent's outlines read
 * by Python's ast as the harness reads them, and the changed files taken as imported by the suite
 * (the case that widens). Prints how many commits would have every workload measured because of a
 * module-level change, by this selection and, with `--against FILE`, by another version of
 * selection.ts (e.g. `git show main:stages/validate/selection.ts`), and every commit the two
 * decide differently, with the reason each gives.
 *
 *   npx tsx test/bench/selection-corpus.ts GIT_DIR [--commits N] [--against OLD_SELECTION_TS] [--bench-dir DIR]
 *
 * GIT_DIR may be a bare repository (a `fetch` mirror). Reads only; writes nothing.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { selectWorkloads, type OutlineSpan, type Selection, type SelectionInput } from '../../stages/validate/selection.js';

type Select = (input: SelectionInput) => Selection;

const OUTLINE_PY = `
import ast, json, sys
src = sys.stdin.read()
try:
    tree = ast.parse(src)
except SyntaxError:
    print("null"); sys.exit(0)
spans = []
def walk(node, prefix):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kind = "class" if isinstance(child, ast.ClassDef) else "def"
            name = prefix + child.name
            first = min([child.lineno] + [d.lineno for d in child.decorator_list])
            spans.append([kind, name, first, getattr(child, "end_lineno", None) or child.lineno])
            walk(child, name + ".")
        else:
            walk(child, prefix)
walk(tree, "")
print(json.dumps(spans))
`;

function git(dir: string, args: string[], input?: string): string {
  return execFileSync('git', ['--git-dir', dir, ...args], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, input });
}

function outlineOf(source: string): OutlineSpan[] | null {
  const out = execFileSync('python3', ['-c', OUTLINE_PY], { input: source, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(out) as OutlineSpan[] | null;
}

async function loadAgainst(path: string): Promise<Select> {
  // the other version imports the repository's modules by relative paths: load it from beside this one
  const here = resolve(import.meta.dirname, '..', '..', 'stages', 'validate');
  const copy = join(here, `.selection-against-${process.pid}.ts`);
  copyFileSync(resolve(path), copy);
  try {
    const mod = (await import(pathToFileURL(copy).href)) as { selectWorkloads: Select };
    return mod.selectWorkloads;
  } finally {
    rmSync(copy, { force: true });
  }
}

function widened(s: Selection): boolean {
  return s.mode === 'all' && /module-level code changed/.test(s.reason);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dir = args[0];
  if (!dir) throw new Error('usage: selection-corpus.ts GIT_DIR [--commits N] [--against OLD_SELECTION_TS] [--bench-dir DIR]');
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const n = Number(flag('--commits') ?? 200);
  const benchDir = flag('--bench-dir') ?? 'benchmarks';
  const against = flag('--against') ? await loadAgainst(flag('--against')!) : null;
  const commits = git(dir, ['log', '--no-merges', '--format=%H %s', `-n${n}`, 'HEAD', '--', '*.py'])
    .split('\n')
    .filter(Boolean)
    .map((l) => ({ sha: l.slice(0, 40), subject: l.slice(41) }));
  let analysed = 0;
  let widenNew = 0;
  let widenOld = 0;
  const differ: string[] = [];
  for (const c of commits) {
    const parent = git(dir, ['rev-parse', `${c.sha}^`]).trim();
    const diff = git(dir, ['diff', '-U3', '--no-renames', parent, c.sha, '--', '*.py']);
    const paths = [...diff.matchAll(/^--- a\/(\S+\.py)$/gm)].map((m) => m[1]!);
    // the package's modules (the suite imports them); tests and the benchmarks it does not
    const source = paths.filter(
      (p) => !p.startsWith(`${benchDir}/`) && !/(^|\/)(tests?|testing)\/|(^|\/)test_[^/]*\.py$|_test\.py$|conftest\.py$/.test(p),
    );
    if (source.length === 0) continue;
    const outlines = new Map<string, OutlineSpan[] | null>();
    for (const p of paths) outlines.set(p, outlineOf(git(dir, ['show', `${parent}:${p}`])));
    const input: SelectionInput = {
      diff,
      repoDir: '/repo',
      benchmarkDir: benchDir,
      outlines,
      imported: new Set(source.map((p) => `/repo/${p}`)),
      // a workload that runs the package (so that fingerprints map) and none of the changed code
      fingerprints: [{ workload: 'untouched', code: [['/repo/__package_of_the_suite__.py', 1, 1]], opaque: false }],
      controls: 0,
    };
    analysed += 1;
    const now = selectWorkloads(input);
    if (widened(now)) widenNew += 1;
    if (against) {
      const then = against(input);
      if (widened(then)) widenOld += 1;
      if (widened(then) !== widened(now) || then.touched.length !== now.touched.length)
        differ.push(
          `${c.sha.slice(0, 10)} ${c.subject.slice(0, 70)}\n    before: ${then.mode}: ${then.reason}\n    now:    ${now.mode}: ${now.reason}`,
        );
    }
  }
  const lines = [
    `${dir}: ${analysed} of the last ${commits.length} commits that change Python change the package's source`,
    `  widened to every workload by a module-level change: ${widenNew}${against ? ` (before: ${widenOld})` : ''}`,
    ...(against ? [`  decided differently: ${differ.length}`, ...differ.map((d) => `  ${d}`)] : []),
  ];
  writeFileSync(1, `${lines.join('\n')}\n`);
}

await main();
