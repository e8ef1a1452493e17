import type { RepoFacts } from './repo-facts.js';

/**
 * The default build script for a commit when no cached or neighbouring script verifies: chosen
 * from the repository facts, and whether the build may reach PyPI. Pure.
 */
export interface Template {
  readonly name: 'editable-offline' | 'editable' | 'pth-path';
  readonly script: string;
}

const HEADER = ['#!/usr/bin/env bash', 'set -euo pipefail', 'cd /repo', 'PY="${PERFMINE_PYTHON:-python3}"'];

/** Build requirements other than setuptools and wheel, which every base image has. */
export function extraBuildRequires(facts: RepoFacts): string[] {
  return facts.buildRequires.filter((r) => !/^(setuptools|wheel)\b/i.test(r.trim()));
}

function quote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

export function chooseTemplate(facts: RepoFacts, options: { readonly offline: boolean }): Template {
  const installable = facts.packagingFiles.some((f) => f === 'pyproject.toml' || f === 'setup.py' || f === 'setup.cfg');
  if (!installable) {
    // No packaging metadata: put the package's directory on the path with a .pth file.
    const dir = facts.layout === 'src' ? '/repo/src' : '/repo';
    return {
      name: 'pth-path',
      script: `${[...HEADER, `site="$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"`, `echo ${dir} > "$site/perfmine-repo.pth"`].join('\n')}\n`,
    };
  }
  if (options.offline) {
    return { name: 'editable-offline', script: `${[...HEADER, '"$PY" -m pip install --no-build-isolation --no-deps -e .'].join('\n')}\n` };
  }
  const lines = [...HEADER];
  const extra = extraBuildRequires(facts);
  if (extra.length > 0) lines.push(`"$PY" -m pip install ${extra.map(quote).join(' ')}`);
  lines.push('"$PY" -m pip install --no-build-isolation -e .');
  return { name: 'editable', script: `${lines.join('\n')}\n` };
}
