/**
 * The executable `.pth` lines an environment may carry: the one list of them.
 *
 * At every start Python's `site` module reads each `*.pth` file of the site directories and
 * executes every line that starts with `import` followed by a space or a tab (exactly so: no
 * leading whitespace, the line as written); any other line that is not a comment or blank names a
 * directory to add to `sys.path`. An executable line runs before anything else of the program, so
 * it can change what every measurement measures. The outside scan refuses a new or changed `.pth`
 * file with an executable line unless the line is one of these packaging hooks, each written by a
 * known installer in a known shape. A hook imports a module its installer wrote (`_distutils_hack`,
 * an editable finder or loader, `_virtualenv`): that module is trusted like any installed
 * package's code; the scan does not check it against its installer's template.
 * Changing this list changes what the scan accepts: add an entry only with the installer that
 * writes it and why running it at start-up cannot change a measurement.
 */
export interface PthHook {
  /** Short stable name, shown with a refusal's allowlist (`perfmine cache show`). */
  readonly id: string;
  /** The `.pth` file's name. */
  readonly file: RegExp;
  /** The whole executable line (without its line break). */
  readonly line: RegExp;
  /** Who writes it and why it is harmless. */
  readonly reason: string;
}

const IDENT = String.raw`[A-Za-z_][A-Za-z0-9_]*`;
/** A Python string literal of a dotted name as setuptools writes it with `%r`: `'pkg'` or `'pkg.sub'`. */
const NAME_LITERAL = String.raw`'${IDENT}(?:\.${IDENT})*'`;
/** The tuple of a dotted name's parts as `%r` writes it: `('pkg',)` or `('pkg', 'sub')`. */
const PARTS_TUPLE = String.raw`\('${IDENT}',(?: '${IDENT}'(?:, '${IDENT}')*)?\)`;

/**
 * Where the namespace package's directory is: the site directory of the `.pth` (an install), or
 * the quoted directory of the source tree (`setup.py develop`, setuptools' `_get_root` there).
 */
const NSPKG_ROOT = String.raw`(?:sys\._getframe\(1\)\.f_locals\['sitedir'\]|'[^'\\\n]*')`;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** setuptools' namespace-package line (setuptools/namespaces.py, `_nspkg_tmpl`, joined by `;`), for one package. */
const NSPKG_LINE = [
  'import sys, types, os',
  'has_mfs = sys.version_info > (3, 5)',
  'p = os.path.join(\u0000ROOT, *\u0000PARTS)',
  "importlib = has_mfs and __import__('importlib.util')",
  "has_mfs and __import__('importlib.machinery')",
  'm = has_mfs and sys.modules.setdefault(\u0000NAME, importlib.util.module_from_spec(importlib.machinery.PathFinder.find_spec(\u0000NAME, [os.path.dirname(p)])))',
  'm = m or sys.modules.setdefault(\u0000NAME, types.ModuleType(\u0000NAME))',
  "mp = (m or []) and m.__dict__.setdefault('__path__',[])",
  '(p not in mp) and mp.append(p)',
]
  .map(escape)
  .join(';')
  .replaceAll('\u0000ROOT', NSPKG_ROOT)
  .replaceAll('\u0000PARTS', PARTS_TUPLE)
  .replaceAll('\u0000NAME', NAME_LITERAL);
/** The extra statement of a dotted namespace package (`_nspkg_tmpl_multi`). */
const NSPKG_MULTI = String.raw`;m and setattr\(sys\.modules\[${NAME_LITERAL}\], '${IDENT}', m\)`;

export const PTH_HOOKS: readonly PthHook[] = [
  {
    id: 'setuptools-distutils-precedence',
    file: /^distutils-precedence\.pth$/,
    line: /^import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os\.environ\.get\(var, '(?:local|stdlib)'\) == 'local'; enabled and __import__\('_distutils_hack'\)\.add_shim\(\); ?$/,
    reason:
      "setuptools (>= 49) installs it with itself: it makes `import distutils` find setuptools' copy; it touches only the distutils import machinery",
  },
  {
    id: 'setuptools-editable-finder',
    file: /^__editable__\..+\.pth$/,
    line: /^import (__editable___[A-Za-z0-9_]+_finder); \1\.install\(\)$/,
    reason:
      "setuptools' editable installs (PEP 660, setuptools >= 64) write it: it puts a finder on sys.meta_path that maps the package's names to its source tree (the repository)",
  },
  {
    id: 'meson-python-editable-loader',
    file: /^.+-editable\.pth$/,
    line: /^import _[A-Za-z0-9_]+_editable_loader$/,
    reason:
      'meson-python (>= 0.13) editable installs (pip install -e of a Meson project: numpy, scipy, pandas, scikit-learn ...) write it: its loader maps the package to the build directory and reruns the Meson build (ninja) on first import',
  },
  {
    id: 'scikit-build-core-editable',
    file: /^(?:_editable_skbc_.+|_.+_editable)\.pth$/,
    line: /^import (?:_editable_skbc_[A-Za-z0-9_]+|_[A-Za-z0-9_]+_editable)$/,
    reason:
      "scikit-build-core's editable installs in redirect mode (its default) write it: its module maps the package's modules to the source and build trees",
  },
  {
    id: 'editables-bootstrap',
    file: /^_editable_impl_.+\.pth$/,
    line: /^import _editable_impl_[A-Za-z0-9_]+$/,
    reason:
      "the `editables` library (hatchling's exact editable mode) writes it: its bootstrap module maps the project's modules to their source files",
  },
  {
    id: 'setuptools-easy-install-prelude',
    file: /^easy-install\.pth$/,
    line: /^import sys; sys\.__plen = len\(sys\.path\)$/,
    reason: "setuptools' legacy easy_install / `setup.py develop` writes it first in easy-install.pth: it counts sys.path's entries",
  },
  {
    id: 'setuptools-easy-install-postlude',
    file: /^easy-install\.pth$/,
    line: /^import sys; new = sys\.path\[sys\.__plen:\]; del sys\.path\[sys\.__plen:\]; p = getattr\(sys, '__egginsert', 0\); sys\.path\[p:p\] = new; sys\.__egginsert = p \+ len\(new\)$/,
    reason:
      "setuptools' legacy easy_install / `setup.py develop` writes it last in easy-install.pth: it moves the paths added above to the front",
  },
  {
    id: 'setuptools-namespace-package',
    file: /-nspkg\.pth$/,
    line: new RegExp(`^${NSPKG_LINE}(?:${NSPKG_MULTI})?$`),
    reason:
      'setuptools writes one line per pkg_resources-style namespace package (`namespace_packages=`) installed without its __init__.py: it creates the namespace module and extends its __path__',
  },
  {
    id: 'virtualenv',
    file: /^_virtualenv\.pth$/,
    line: /^import _virtualenv$/,
    reason:
      "virtualenv (>= 20) writes it into each environment it creates: it patches distutils' and setuptools' install paths for that environment",
  },
];

/** The hook that allows this executable line in a `.pth` file of this name, or undefined. */
export function allowedPthHook(fileName: string, line: string): PthHook | undefined {
  return PTH_HOOKS.find((h) => h.file.test(fileName) && h.line.test(line));
}

/** Whether `site` executes a `.pth` line (the test site.py makes). */
export function isExecutablePthLine(line: string): boolean {
  return line.startsWith('import ') || line.startsWith('import\t');
}
