import { specifierAllowsAtLeast } from '../../pipeline/concepts/pep440.js';
import { declaredRequiresPython, pythonMetadataOf, type ProjectFiles } from '../../pipeline/concepts/python-project.js';

/**
 * Does a project support Python >= 3.N? Read from `requires-python` (pyproject.toml),
 * `python_requires` (setup.cfg, setup.py) and `Programming Language :: Python :: 3.x`
 * classifiers (pipeline/concepts/python-project.ts, pep440.ts). Pure. Unknown when none of them says.
 */

export interface PythonSupport {
  /** true / false when the metadata says; null when it does not. */
  readonly supported: boolean | null;
  /** What was read (`requires-python >=3.9`, `classifiers 3.6, 3.7`), for the record. */
  readonly evidence: string | null;
}

/** Minor versions of the project's `Programming Language :: Python :: 3.x` classifiers. */
export function classifierMinors(files: ProjectFiles): number[] {
  const minors = pythonMetadataOf(files).classifierVersions.flatMap((v) => (v.startsWith('3.') ? [Number(v.slice(2))] : []));
  return [...new Set(minors)].sort((a, b) => a - b);
}

export function readPythonSupport(files: ProjectFiles, minPython: string): PythonSupport {
  const minMinor = Number(minPython.split('.')[1] ?? 0);
  const req = declaredRequiresPython(files);
  if (req) {
    const allowed = specifierAllowsAtLeast(req.spec, minMinor);
    if (allowed !== null) return { supported: allowed, evidence: `${req.from} ${req.spec}` };
  }
  const minors = classifierMinors(files);
  if (minors.length > 0)
    return { supported: minors.some((m) => m >= minMinor), evidence: `classifiers ${minors.map((m) => `3.${m}`).join(', ')}` };
  return { supported: null, evidence: null };
}
