import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BuildScripts } from '../../cache/build-scripts.js';
import { ImageInventories, decodeInventory, encodeInventory } from '../../cache/image-inventories.js';
import { openStore } from '../../cache/store.js';
import { keepsText, needsMd5, resolvePath, type ImageTree, type TreeEntry } from '../../pipeline/concepts/image-tree.js';
import { commitReport, formatScan } from '../../pipeline/cli/commands/cache.js';
import { classifyFailure } from '../../pipeline/services/environments/failure.js';
import { scanRecord, scanStepResult, type ImageScanResult } from '../../pipeline/services/environments/image-scan.js';
import { scanFindings } from '../../pipeline/services/environments/image-scan-rules.js';
import { allowedPthHook, PTH_HOOKS } from '../../pipeline/services/environments/pth-hooks.js';
import { newAttempt } from './harness.js';

/**
 * The outside scan's rules over hand-made trees: a small Debian-like base (merged /usr, Python
 * 3.11, dpkg's records) and images made from it by one change each. A normal build's changes are
 * accepted; each planted change is refused with its file named.
 */

const md5 = (text: string) => createHash('md5').update(text).digest('hex');
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

interface FileSpec {
  readonly content: string;
  readonly mtime?: number;
}
interface TreeSpec {
  readonly files?: Readonly<Record<string, string | FileSpec>>;
  readonly links?: Readonly<Record<string, string>>;
  readonly dirs?: readonly string[];
  readonly env?: readonly string[];
}

const BASE_TIME = 1_681_000_000;
const BUILD_TIME = 1_790_000_000;

/** Adds a path's parent directories. */
function addParents(entries: Map<string, TreeEntry>, path: string): void {
  const parts = path.split('/').filter(Boolean);
  for (let i = 1; i < parts.length; i++) {
    const dir = `/${parts.slice(0, i).join('/')}`;
    if (!entries.has(dir)) entries.set(dir, { type: 'directory', mode: 0o755, size: 0, mtime: BASE_TIME });
  }
}

/**
 * A tree as the reader makes it. With `compareTo`, MD5s where the reader computes them (a file
 * that is not the base's in type, size and time).
 */
function tree(spec: TreeSpec, compareTo?: ImageTree): ImageTree {
  const entries = new Map<string, TreeEntry>();
  const texts = new Map<string, string>();
  for (const dir of spec.dirs ?? []) {
    addParents(entries, dir);
    entries.set(dir, { type: 'directory', mode: 0o755, size: 0, mtime: BASE_TIME });
  }
  for (const [path, target] of Object.entries(spec.links ?? {})) {
    addParents(entries, path);
    entries.set(path, { type: 'symlink', mode: 0o777, size: 0, mtime: BASE_TIME, target });
  }
  for (const [path, file] of Object.entries(spec.files ?? {})) {
    const { content, mtime } = typeof file === 'string' ? { content: file, mtime: BASE_TIME } : { mtime: BASE_TIME, ...file };
    addParents(entries, path);
    const size = Buffer.byteLength(content);
    const withMd5 = compareTo !== undefined && needsMd5(compareTo.entries.get(path), { type: 'file', size, mtime });
    entries.set(path, { type: 'file', mode: 0o644, size, mtime, sha256: sha(content), ...(withMd5 ? { md5: md5(content) } : {}) });
    if (keepsText(path)) texts.set(path, content);
  }
  return { entries, texts, cutTexts: new Set(), env: [...(spec.env ?? [])] };
}

/** dpkg's md5sums text for files (paths without the leading slash, as dpkg writes them). */
function md5sums(files: Readonly<Record<string, string>>): string {
  return Object.entries(files)
    .map(([path, content]) => `${md5(content)}  ${path.replace(/^\//, '')}\n`)
    .join('');
}

function statusOf(packages: readonly (readonly [string, string, string?])[]): string {
  return packages
    .map(([pkg, version, arch]) => `Package: ${pkg}\nStatus: install ok installed\nVersion: ${version}\nArchitecture: ${arch ?? 'all'}\n`)
    .join('\n');
}

const PRECEDENCE_LINE =
  "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n";
const PYTHON_ELF = '\u007fELF python3.11';
const TIMEIT = 'default_number = 1000000\n';
const STDLIB_FILES: Record<string, string> = {
  '/usr/lib/python3.11/timeit.py': TIMEIT,
  '/usr/lib/python3.11/os.py': 'import abc\n',
  '/usr/lib/python3.11/lib-dynload/_decimal.cpython-311-x86_64-linux-gnu.so': '\u007fELF decimal',
};
const BASE_PACKAGES: readonly (readonly [string, string, string?])[] = [
  ['libpython3.11-stdlib', '3.11.2-6', 'amd64'],
  ['python3.11-minimal', '3.11.2-6', 'amd64'],
  ['libc6', '2.36-9', 'amd64'],
  ['zlib1g', '1:1.2.13.dfsg-1', 'amd64'],
  ['python3-setuptools', '66.1.1-1'],
];
const BASE_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LANG=C.UTF-8', 'PYTHONDONTWRITEBYTECODE=1'];

function baseSpec(): TreeSpec {
  return {
    dirs: ['/usr/local/lib/python3.11/dist-packages', '/usr/local/bin', '/root', '/opt', '/usr/local/lib', '/etc/ld.so.conf.d'],
    links: {
      '/bin': 'usr/bin',
      '/lib': 'usr/lib',
      '/usr/bin/python3': 'python3.11',
      '/usr/lib/python3.11/sitecustomize.py': '/etc/python3.11/sitecustomize.py',
      '/usr/lib/x86_64-linux-gnu/libz.so.1': 'libz.so.1.2.13',
    },
    files: {
      '/usr/bin/python3.11': PYTHON_ELF,
      '/usr/bin/python3-config': '#!/bin/sh\n',
      '/usr/bin/bash': '\u007fELF bash',
      ...STDLIB_FILES,
      '/usr/lib/python3.11/__pycache__/timeit.cpython-311.pyc': 'bytecode of timeit',
      '/etc/python3.11/sitecustomize.py': '# Debian: empty\n',
      '/usr/lib/python3/dist-packages/distutils-precedence.pth': PRECEDENCE_LINE,
      '/usr/lib/python3/dist-packages/_distutils_hack/__init__.py': 'def add_shim(): pass\n',
      '/usr/lib/python3/dist-packages/_distutils_hack/__pycache__/__init__.cpython-311.pyc': 'bytecode of the hack',
      '/usr/lib/x86_64-linux-gnu/libm.so.6': '\u007fELF libm',
      '/usr/lib/x86_64-linux-gnu/libz.so.1.2.13': '\u007fELF libz',
      '/etc/ld.so.conf.d/libc.conf': '/usr/local/lib\n',
      '/var/lib/dpkg/status': statusOf(BASE_PACKAGES),
      '/var/lib/dpkg/info/libpython3.11-stdlib:amd64.md5sums': md5sums({
        ...STDLIB_FILES,
        // The base image deleted the documentation: listed, absent.
        '/usr/share/doc/libpython3.11-stdlib/copyright': 'Copyright',
      }),
      '/var/lib/dpkg/info/python3.11-minimal.md5sums': md5sums({ '/usr/bin/python3.11': PYTHON_ELF }),
      // Listed under /lib (merged /usr: the file is in /usr/lib).
      '/var/lib/dpkg/info/libc6:amd64.md5sums': md5sums({ '/lib/x86_64-linux-gnu/libm.so.6': '\u007fELF libm' }),
      '/var/lib/dpkg/info/zlib1g:amd64.md5sums': md5sums({ '/usr/lib/x86_64-linux-gnu/libz.so.1.2.13': '\u007fELF libz' }),
      '/var/lib/dpkg/info/python3-setuptools.md5sums': md5sums({
        '/usr/lib/python3/dist-packages/distutils-precedence.pth': PRECEDENCE_LINE,
        '/usr/lib/python3/dist-packages/_distutils_hack/__init__.py': 'def add_shim(): pass\n',
      }),
    },
    env: BASE_ENV,
  };
}

const BASE = tree(baseSpec());

interface Change {
  readonly files?: Readonly<Record<string, string | FileSpec>>;
  readonly links?: Readonly<Record<string, string>>;
  readonly dirs?: readonly string[];
  readonly remove?: readonly string[];
  readonly env?: readonly string[];
}

/** The base with a build's changes (new files are written at build time), as the reader sees it. */
function imageOf(change: Change): ImageTree {
  const spec = baseSpec();
  const built = (file: string | FileSpec): FileSpec => (typeof file === 'string' ? { content: file, mtime: BUILD_TIME } : file);
  const files: Record<string, string | FileSpec> = { ...spec.files };
  const links: Record<string, string> = { ...spec.links };
  for (const [path, file] of Object.entries(change.files ?? {})) {
    files[path] = built(file);
    delete links[path];
  }
  for (const [path, target] of Object.entries(change.links ?? {})) {
    links[path] = target;
    delete files[path];
  }
  for (const path of change.remove ?? []) {
    delete files[path];
    delete links[path];
  }
  return tree({ dirs: [...(spec.dirs ?? []), ...(change.dirs ?? [])], files, links, env: change.env ?? BASE_ENV }, BASE);
}

const named = (image: ImageTree) => scanFindings(BASE, image).map((f) => [f.rule, f.path]);

describe('paths in the tree', () => {
  it('resolve through symbolic links inside the tree, absolute targets from its root', () => {
    expect(resolvePath(BASE.entries, '/bin/python3')).toBe('/usr/bin/python3.11');
    expect(resolvePath(BASE.entries, '/lib/x86_64-linux-gnu/libz.so.1')).toBe('/usr/lib/x86_64-linux-gnu/libz.so.1.2.13');
    expect(resolvePath(BASE.entries, '/usr/lib/python3.11/sitecustomize.py')).toBe('/etc/python3.11/sitecustomize.py');
    expect(resolvePath(BASE.entries, '/usr/bin/../lib/python3.11/os.py')).toBe('/usr/lib/python3.11/os.py');
    expect(resolvePath(BASE.entries, '/usr/bin/missing')).toBeNull();
    const loop = tree({ links: { '/a': 'b', '/b': 'a' } });
    expect(resolvePath(loop.entries, '/a')).toBeNull();
  });
});

describe('a normal build is accepted', () => {
  it('the base itself', () => {
    expect(scanFindings(BASE, imageOf({}))).toEqual([]);
  });

  it('wheels installed with pip into /usr/local, with their bytecode and scripts', () => {
    const image = imageOf({
      files: {
        '/usr/local/lib/python3.11/dist-packages/fastmath/__init__.py': 'def add(a, b): return a + b\n',
        '/usr/local/lib/python3.11/dist-packages/fastmath/__pycache__/__init__.cpython-311.pyc': 'bytecode',
        '/usr/local/lib/python3.11/dist-packages/fastmath-0.2.0.dist-info/RECORD': 'fastmath/__init__.py,,\n',
        '/usr/local/lib/python3.11/dist-packages/setuptools/__init__.py': '',
        '/usr/local/lib/python3.11/dist-packages/_distutils_hack/__init__.py': 'def add_shim(): pass\n',
        '/usr/local/lib/python3.11/dist-packages/distutils-precedence.pth': PRECEDENCE_LINE.replace("'local') ==", "'stdlib') =="),
        '/usr/local/lib/python3.11/dist-packages/paths.pth': '# a comment\n/repo/vendored\n\n',
        '/usr/local/bin/fastmath-cli': '#!/usr/bin/python3\nimport fastmath\n',
      },
      dirs: ['/repo/vendored'],
    });
    expect(named(image)).toEqual([]);
  });

  it("an editable install (setuptools' finder .pth and module), and a legacy develop install", () => {
    const image = imageOf({
      files: {
        '/usr/local/lib/python3.11/dist-packages/__editable__.fastmath-0.2.0.pth':
          'import __editable___fastmath_0_2_0_finder; __editable___fastmath_0_2_0_finder.install()',
        '/usr/local/lib/python3.11/dist-packages/__editable___fastmath_0_2_0_finder.py': 'MAPPING = {}\ndef install(): pass\n',
        '/usr/local/lib/python3.11/dist-packages/__pycache__/__editable___fastmath_0_2_0_finder.cpython-311.pyc': 'bytecode',
        '/usr/local/lib/python3.11/dist-packages/easy-install.pth':
          "import sys; sys.__plen = len(sys.path)\n/repo/src\nimport sys; new = sys.path[sys.__plen:]; del sys.path[sys.__plen:]; p = getattr(sys, '__egginsert', 0); sys.path[p:p] = new; sys.__egginsert = p + len(new)\n",
        '/usr/local/lib/python3.11/dist-packages/zope.interface-5.0-py3.11-nspkg.pth':
          "import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join(sys._getframe(1).f_locals['sitedir'], *('zope',));importlib = has_mfs and __import__('importlib.util');has_mfs and __import__('importlib.machinery');m = has_mfs and sys.modules.setdefault('zope', importlib.util.module_from_spec(importlib.machinery.PathFinder.find_spec('zope', [os.path.dirname(p)])));m = m or sys.modules.setdefault('zope', types.ModuleType('zope'));mp = (m or []) and m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p)\n",
        '/repo/src/fastmath/__init__.py': '',
      },
    });
    expect(named(image)).toEqual([]);
  });

  it('a venv and a virtualenv: links to the base interpreter, home /usr/bin, their packaging hooks', () => {
    const image = imageOf({
      links: {
        '/opt/venv/bin/python': 'python3',
        '/opt/venv/bin/python3': '/usr/bin/python3',
        '/opt/venv/bin/python3.11': 'python3',
        '/opt/ve2/bin/python': '/usr/bin/python3.11',
        '/usr/local/bin/python': '/usr/bin/python3',
      },
      files: {
        '/opt/venv/pyvenv.cfg': 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.11.2\n',
        '/opt/venv/lib/python3.11/site-packages/distutils-precedence.pth': PRECEDENCE_LINE,
        '/opt/venv/lib/python3.11/site-packages/pip/__init__.py': '',
        '/opt/ve2/pyvenv.cfg': 'home = /bin\nimplementation = CPython\nvirtualenv = 20.17.1\n',
        '/opt/ve2/lib/python3.11/site-packages/_virtualenv.pth': 'import _virtualenv',
        '/opt/ve2/lib/python3.11/site-packages/_virtualenv.py': '"""Patches distutils."""\n',
      },
    });
    expect(named(image)).toEqual([]);
  });

  it('Debian packages installed with apt: files that match their checksums, links, bytecode py3compile wrote', () => {
    const foo = { '/usr/lib/python3/dist-packages/foo.py': 'X = 1\n', '/usr/lib/python3.11/tkinter/__init__.py': 'import _tkinter\n' };
    const lib = { '/usr/lib/x86_64-linux-gnu/libfoo.so.1.0': '\u007fELF foo' };
    const image = imageOf({
      files: {
        ...foo,
        ...lib,
        '/usr/lib/python3/dist-packages/__pycache__/foo.cpython-311.pyc': 'bytecode of foo',
        '/usr/lib/python3.11/tkinter/__pycache__/__init__.cpython-311.pyc': 'bytecode of tkinter',
        '/var/lib/dpkg/status': statusOf([...BASE_PACKAGES, ['python3-foo', '1.0-1'], ['libfoo1', '1.0-1', 'amd64']]),
        // The build deleted the new package's documentation, as the base image did its own.
        '/var/lib/dpkg/info/python3-foo.md5sums': md5sums({ ...foo, '/usr/share/doc/python3-foo/copyright': 'c' }),
        '/var/lib/dpkg/info/libfoo1:amd64.md5sums': md5sums(lib),
      },
      links: { '/usr/lib/x86_64-linux-gnu/libfoo.so.1': 'libfoo.so.1.0' },
    });
    expect(named(image)).toEqual([]);
  });

  it('a package upgraded by apt: a new version, new checksums, files that match them', () => {
    const libz = '\u007fELF libz, patched';
    const image = imageOf({
      files: {
        '/usr/lib/x86_64-linux-gnu/libz.so.1.2.13': libz,
        '/var/lib/dpkg/status': statusOf(
          BASE_PACKAGES.map((p) => (p[0] === 'zlib1g' ? ['zlib1g', '1:1.2.13.dfsg-1+deb12u1', 'amd64'] : p)),
        ),
        '/var/lib/dpkg/info/zlib1g:amd64.md5sums': md5sums({ '/usr/lib/x86_64-linux-gnu/libz.so.1.2.13': libz }),
      },
    });
    expect(named(image)).toEqual([]);
  });

  it('bytecode deleted (a clean-up), perfmine variables and a longer PATH in the configuration', () => {
    const image = imageOf({
      remove: ['/usr/lib/python3.11/__pycache__/timeit.cpython-311.pyc'],
      env: [...BASE_ENV.map((l) => (l.startsWith('PATH=') ? `${l}:/opt/venv/bin` : l)), 'PERFMINE_PYTHON=python3.11', 'PIP_NO_INPUT=1'],
    });
    expect(named(image)).toEqual([]);
  });
});

describe('each planted change is refused, naming its file', () => {
  const refused: [string, Change, [string, string][]][] = [
    [
      'sitecustomize in /usr/local',
      { files: { '/usr/local/lib/python3.11/dist-packages/sitecustomize.py': 'import os\n' } },
      [['customize-hook', '/usr/local/lib/python3.11/dist-packages/sitecustomize.py']],
    ],
    [
      "usercustomize in root's user site",
      { files: { '/root/.local/lib/python3.11/site-packages/usercustomize.py': 'import os\n' } },
      [['customize-hook', '/root/.local/lib/python3.11/site-packages/usercustomize.py']],
    ],
    [
      "Debian's sitecustomize (a conffile, not in md5sums) edited through its link",
      { files: { '/etc/python3.11/sitecustomize.py': 'import os; os.nice(0)\n' } },
      [['customize-hook', '/usr/lib/python3.11/sitecustomize.py']],
    ],
    [
      'sitecustomize in a directory a .pth adds',
      {
        files: {
          '/usr/local/lib/python3.11/dist-packages/src.pth': '/repo/src\n',
          '/repo/src/sitecustomize.py': 'import os\n',
        },
      },
      [['customize-hook', '/repo/src/sitecustomize.py']],
    ],
    [
      'sitecustomize as a package',
      { files: { '/usr/local/lib/python3.11/dist-packages/sitecustomize/__init__.py': 'import os\n' } },
      [['customize-hook', '/usr/local/lib/python3.11/dist-packages/sitecustomize']],
    ],
    [
      'a .pth with an executable line',
      { files: { '/usr/local/lib/python3.11/dist-packages/zz-hook.pth': "/repo\nimport os; os.environ['X'] = '1'\n" } },
      [['pth-exec', '/usr/local/lib/python3.11/dist-packages/zz-hook.pth']],
    ],
    [
      "an editable finder's line with one more statement",
      {
        files: {
          '/usr/local/lib/python3.11/dist-packages/__editable__.x-1.pth':
            'import __editable___x_1_finder; __editable___x_1_finder.install(); import os',
        },
      },
      [['pth-exec', '/usr/local/lib/python3.11/dist-packages/__editable__.x-1.pth']],
    ],
    [
      "Debian's distutils-precedence.pth with code added",
      { files: { '/usr/lib/python3/dist-packages/distutils-precedence.pth': `${PRECEDENCE_LINE}import timeit_hook\n` } },
      [['pth-exec', '/usr/lib/python3/dist-packages/distutils-precedence.pth']],
    ],
    [
      'a wrapper python3 in /usr/local/bin',
      { files: { '/usr/local/bin/python3': '#!/bin/sh\nexec /usr/bin/python3.11 "$@"\n' } },
      [['interpreter', '/usr/local/bin/python3']],
    ],
    [
      'a copy of the interpreter (its prefix is found from where it is)',
      { files: { '/usr/local/bin/python3.11': PYTHON_ELF } },
      [['interpreter', '/usr/local/bin/python3.11']],
    ],
    [
      'python3 linked to another program',
      { links: { '/usr/local/bin/python3': '/bin/bash' } },
      [['interpreter', '/usr/local/bin/python3']],
    ],
    ['/usr/bin/python3.11 replaced', { files: { '/usr/bin/python3.11': `${PYTHON_ELF}\u0000` } }, [['interpreter', '/usr/bin/python3.11']]],
    [
      'python3 in a directory the PATH puts first',
      {
        files: { '/opt/tools/python3': '#!/bin/sh\n' },
        env: BASE_ENV.map((l) => (l.startsWith('PATH=') ? 'PATH=/opt/tools:/usr/bin:/bin' : l)),
      },
      [['interpreter', '/opt/tools/python3']],
    ],
    [
      'a venv whose home is elsewhere',
      {
        files: { '/opt/venv/pyvenv.cfg': 'home = /opt/fake/bin\n' },
        links: { '/opt/venv/bin/python3': '/usr/bin/python3.11' },
      },
      [['interpreter', '/opt/venv/pyvenv.cfg']],
    ],
    ['/etc/ld.so.preload', { files: { '/etc/ld.so.preload': '/usr/local/lib/libhook.so\n' } }, [['preload', '/etc/ld.so.preload']]],
    ['ENV LD_PRELOAD', { env: [...BASE_ENV, 'LD_PRELOAD=/usr/local/lib/libhook.so'] }, [['image-env', 'ENV LD_PRELOAD']]],
    ['ENV PYTHONSTARTUP', { env: [...BASE_ENV, 'PYTHONSTARTUP=/root/.pythonrc'] }, [['image-env', 'ENV PYTHONSTARTUP']]],
    ['ENV PYTHONPATH', { env: [...BASE_ENV, 'PYTHONPATH=/opt/hooks'] }, [['image-env', 'ENV PYTHONPATH']]],
    ['ENV PYTHONHOME', { env: [...BASE_ENV, 'PYTHONHOME=/usr'] }, [['image-env', 'ENV PYTHONHOME']]],
    [
      'an edited standard library module',
      { files: { '/usr/lib/python3.11/timeit.py': 'default_number = 1000001\n' } },
      [['package-file', '/usr/lib/python3.11/timeit.py']],
    ],
    [
      'an edited module that keeps its size and time',
      { files: { '/usr/lib/python3.11/timeit.py': { content: TIMEIT.replace('1000000', '9999999'), mtime: BASE_TIME } } },
      [['package-file', '/usr/lib/python3.11/timeit.py']],
    ],
    [
      'a deleted extension module (Python falls back to the pure one)',
      { remove: ['/usr/lib/python3.11/lib-dynload/_decimal.cpython-311-x86_64-linux-gnu.so'] },
      [['package-file', '/usr/lib/python3.11/lib-dynload/_decimal.cpython-311-x86_64-linux-gnu.so']],
    ],
    [
      'a library that dpkg lists through /lib, replaced',
      { files: { '/usr/lib/x86_64-linux-gnu/libm.so.6': '\u007fELF slow libm' } },
      [['package-file', '/usr/lib/x86_64-linux-gnu/libm.so.6']],
    ],
    [
      "an edited module with its package's checksums forged (same version)",
      {
        files: {
          '/usr/lib/python3.11/timeit.py': 'default_number = 1\n',
          '/var/lib/dpkg/info/libpython3.11-stdlib:amd64.md5sums': md5sums({
            ...STDLIB_FILES,
            '/usr/lib/python3.11/timeit.py': 'default_number = 1\n',
          }),
        },
      },
      [
        ['package-record', '/var/lib/dpkg/info/libpython3.11-stdlib:amd64.md5sums'],
        ['stdlib', '/usr/lib/python3.11/timeit.py'],
      ],
    ],
    [
      "a package's checksums deleted while it stays installed",
      { remove: ['/var/lib/dpkg/info/zlib1g:amd64.md5sums'] },
      [['package-record', '/var/lib/dpkg/info/zlib1g:amd64.md5sums']],
    ],
    ["dpkg's status deleted", { remove: ['/var/lib/dpkg/status'] }, [['package-record', '/var/lib/dpkg/status']]],
    [
      "the standard library's bytecode changed",
      { files: { '/usr/lib/python3.11/__pycache__/timeit.cpython-311.pyc': 'forged bytecode' } },
      [['stdlib', '/usr/lib/python3.11/__pycache__/timeit.cpython-311.pyc']],
    ],
    [
      "a Debian package's bytecode changed (a module the allowed hook imports)",
      { files: { '/usr/lib/python3/dist-packages/_distutils_hack/__pycache__/__init__.cpython-311.pyc': 'forged bytecode' } },
      [['bytecode', '/usr/lib/python3/dist-packages/_distutils_hack/__pycache__/__init__.cpython-311.pyc']],
    ],
    [
      'a new module in the standard library (it shadows site-packages)',
      { files: { '/usr/lib/python3.11/numpy.py': 'raise ImportError\n' } },
      [['stdlib', '/usr/lib/python3.11/numpy.py']],
    ],
    [
      'a zip of the standard library first on sys.path',
      { files: { '/usr/lib/python311.zip': 'PK zip' } },
      [['stdlib', '/usr/lib/python311.zip']],
    ],
    [
      'a second standard library where a copied interpreter would look',
      { files: { '/usr/local/lib/python3.11/os.py': 'import abc\n' } },
      [['stdlib', '/usr/local/lib/python3.11/os.py']],
    ],
    [
      "a library named like the base's, where the dynamic linker looks first",
      { files: { '/usr/local/lib/libm.so.6': '\u007fELF slow libm' } },
      [['library-shadow', '/usr/local/lib/libm.so.6']],
    ],
  ];

  it.each(refused)('%s', (_name, change, expected) => {
    const findings = scanFindings(BASE, imageOf(change));
    expect(findings.map((f) => [f.rule, f.path])).toEqual(expected);
    for (const f of findings) expect(f.detail.length).toBeGreaterThan(10);
  });

  it('a variable the base sets to the same value is not a finding', () => {
    const base = { ...BASE, env: [...BASE_ENV, 'LD_LIBRARY_PATH=/opt/lib'] };
    expect(scanFindings(base, { ...imageOf({}), env: [...BASE_ENV, 'LD_LIBRARY_PATH=/opt/lib'] })).toEqual([]);
    expect(scanFindings(base, { ...imageOf({}), env: [...BASE_ENV, 'LD_LIBRARY_PATH=/opt/other'] }).map((f) => f.path)).toEqual([
      'ENV LD_LIBRARY_PATH',
    ]);
  });

  it('reports findings in rule order, one per path', () => {
    const image = imageOf({
      files: {
        '/usr/lib/python3.11/timeit.py': 'default_number = 1\n',
        '/usr/local/lib/python3.11/dist-packages/sitecustomize.py': '',
        '/usr/bin/python3.11': 'another',
      },
      env: [...BASE_ENV, 'PYTHONPATH=/x'],
    });
    expect(named(image)).toEqual([
      ['image-env', 'ENV PYTHONPATH'],
      ['interpreter', '/usr/bin/python3.11'],
      ['customize-hook', '/usr/local/lib/python3.11/dist-packages/sitecustomize.py'],
      ['package-file', '/usr/lib/python3.11/timeit.py'],
    ]);
  });

  it('a .pth longer than what is read is refused', () => {
    const image = imageOf({ files: { '/usr/local/lib/python3.11/dist-packages/big.pth': '/repo\n' } });
    const cut = { ...image, cutTexts: new Set(['/usr/local/lib/python3.11/dist-packages/big.pth']) };
    expect(scanFindings(BASE, cut).map((f) => [f.rule, f.path])).toEqual([['pth-exec', '/usr/local/lib/python3.11/dist-packages/big.pth']]);
  });
});

describe('a base whose Python is not a Debian package (python:3.11 style, under /usr/local)', () => {
  const spec: TreeSpec = {
    links: { '/usr/local/bin/python3': 'python3.11' },
    files: {
      '/usr/local/bin/python3.11': PYTHON_ELF,
      '/usr/local/lib/python3.11/os.py': 'import abc\n',
      '/usr/local/lib/python3.11/timeit.py': TIMEIT,
      '/usr/local/lib/python3.11/site-packages/README.txt': 'site',
    },
    env: BASE_ENV,
  };
  const base = tree(spec);
  const image = (files: Record<string, string>) =>
    tree(
      {
        ...spec,
        files: { ...spec.files, ...Object.fromEntries(Object.entries(files).map(([p, c]) => [p, { content: c, mtime: BUILD_TIME }])) },
      },
      base,
    );

  it("guards its standard library by the base's files (no dpkg record), and accepts site-packages", () => {
    expect(scanFindings(base, image({ '/usr/local/lib/python3.11/site-packages/fastmath/__init__.py': '' }))).toEqual([]);
    expect(
      scanFindings(base, image({ '/usr/local/lib/python3.11/timeit.py': 'default_number = 1\n' })).map((f) => [f.rule, f.path]),
    ).toEqual([['stdlib', '/usr/local/lib/python3.11/timeit.py']]);
    expect(scanFindings(base, image({ '/usr/local/lib/python3.11/sitecustomize.py': '' })).map((f) => [f.rule, f.path])).toEqual([
      ['customize-hook', '/usr/local/lib/python3.11/sitecustomize.py'],
    ]);
  });
});

describe('the allowlist of executable .pth lines', () => {
  it('names its installer and reason for every entry', () => {
    for (const hook of PTH_HOOKS) expect(hook.reason.length).toBeGreaterThan(40);
    expect(new Set(PTH_HOOKS.map((h) => h.id)).size).toBe(PTH_HOOKS.length);
  });

  it("accepts setuptools' namespace lines for dotted packages and develop installs, nothing around them", () => {
    const dotted =
      "import sys, types, os;has_mfs = sys.version_info > (3, 5);p = os.path.join('/repo/src', *('google', 'cloud'));importlib = has_mfs and __import__('importlib.util');has_mfs and __import__('importlib.machinery');m = has_mfs and sys.modules.setdefault('google.cloud', importlib.util.module_from_spec(importlib.machinery.PathFinder.find_spec('google.cloud', [os.path.dirname(p)])));m = m or sys.modules.setdefault('google.cloud', types.ModuleType('google.cloud'));mp = (m or []) and m.__dict__.setdefault('__path__',[]);(p not in mp) and mp.append(p);m and setattr(sys.modules['google'], 'cloud', m)";
    expect(allowedPthHook('google_cloud-1.0-nspkg.pth', dotted)?.id).toBe('setuptools-namespace-package');
    expect(allowedPthHook('google_cloud-1.0-nspkg.pth', `${dotted};import os`)).toBeUndefined();
    expect(allowedPthHook('other.pth', dotted)).toBeUndefined();
    expect(allowedPthHook('_virtualenv.pth', 'import _virtualenv; import os')).toBeUndefined();
    expect(allowedPthHook('__editable__.a-1.pth', 'import __editable___a_1_finder; __editable___b_1_finder.install()')).toBeUndefined();
    expect(allowedPthHook('scikit-learn-editable.pth', 'import _scikit_learn_editable_loader')?.id).toBe('meson-python-editable-loader');
    expect(allowedPthHook('_editable_skbc_fastmath.pth', 'import _editable_skbc_fastmath')?.id).toBe('scikit-build-core-editable');
    expect(allowedPthHook('_fastmath_editable.pth', 'import _fastmath_editable')?.id).toBe('scikit-build-core-editable');
    expect(allowedPthHook('_editable_impl_fastmath.pth', 'import _editable_impl_fastmath')?.id).toBe('editables-bootstrap');
    expect(allowedPthHook('scikit-learn-editable.pth', 'import _scikit_learn_editable_loader; import os')).toBeUndefined();
  });
});

describe('stored inventories', () => {
  it('round-trip through the store, and a row of another format reads as missing', () => {
    const db = openStore(':memory:');
    const store = new ImageInventories(db);
    expect(decodeInventory(encodeInventory(BASE))).toEqual(BASE);
    store.save('sha256:base', BASE, { files: BASE.entries.size, bytes: 100, durationMs: 12.4 });
    store.save('sha256:base', BASE, { files: BASE.entries.size, bytes: 100, durationMs: 12.4 });
    const got = store.get('sha256:base');
    expect(got?.tree).toEqual(BASE);
    expect(got).toMatchObject({ files: BASE.entries.size, bytes: 100, durationMs: 12 });
    expect(store.get('sha256:other')).toBeNull();
    db.prepare('UPDATE image_inventories SET format = 999').run();
    expect(store.get('sha256:base')).toBeNull();
    db.close();
  });
});

describe('the verdict with the attempt', () => {
  const result = (findings: ImageScanResult['findings']): ImageScanResult => ({
    verdict: findings.length === 0 ? 'accepted' : 'tampered',
    findings,
    durationMs: 3_210,
    filesRead: 14_284,
    bytesRead: 507 * 1024 * 1024,
    imageId: 'sha256:image',
    baseImageId: 'sha256:base',
    inventoryFrom: 'process',
    inventoryMs: 0,
  });

  it('a refusal is a failed `scan` step: environment-tampered, naming the first file', () => {
    const findings = scanFindings(
      BASE,
      imageOf({ files: { '/usr/lib/python3.11/timeit.py': 'default_number = 1\n' }, env: [...BASE_ENV, 'PYTHONPATH=/x'] }),
    );
    const step = scanStepResult(result(findings));
    expect(step).toMatchObject({ step: 'scan', ok: false, exitCode: null, timedOut: false });
    expect(step.stderr.trim().split('\n')).toHaveLength(2);
    expect(classifyFailure([step])).toMatchObject({
      step: 'scan',
      kind: 'environment-tampered',
      headline: expect.stringMatching(/^environment tampered: ENV PYTHONPATH \(image-env\): .* \(and 1 more\)$/),
    });
    expect(classifyFailure([scanStepResult(result([]))])).toBeNull();
  });

  it('is stored with the attempt and shown by `perfmine cache show`', () => {
    const db = openStore(':memory:');
    const store = new BuildScripts(db);
    const findings = scanFindings(BASE, imageOf({ files: { '/etc/ld.so.preload': '/x.so\n' } }));
    const verified = store.record(
      newAttempt({ outcome: 'verified', failingStep: null, failureKind: null, failure: null, scan: scanRecord(result([])) }),
    );
    const refused = store.record(
      newAttempt({ outcome: 'failed', failingStep: 'scan', failureKind: 'environment-tampered', scan: scanRecord(result(findings)) }),
    );
    const older = store.record(newAttempt({ outcome: 'failed' }));
    expect(store.get(verified)?.scan).toEqual({
      verdict: 'accepted',
      findings: [],
      findingCount: 0,
      durationMs: 3_210,
      filesRead: 14_284,
      bytesRead: 507 * 1024 * 1024,
    });
    expect(store.get(refused)?.scan?.findings).toEqual([{ rule: 'preload', path: '/etc/ld.so.preload', detail: expect.any(String) }]);
    expect(store.get(older)?.scan).toBeNull();
    const report = commitReport(store.forCommit('o/r', 'a'.repeat(40)).filter((a) => a.id !== older));
    expect(formatScan(report.verified?.scan ?? null)).toEqual(['outside scan: accepted in 3.2 s, 14284 files, 507 MiB']);
    expect(formatScan(report.lastFailure?.scan ?? null)).toEqual([
      'outside scan: tampered in 3.2 s, 14284 files, 507 MiB',
      '  /etc/ld.so.preload (preload): the dynamic linker loads /x.so into every process',
    ]);
    db.close();
  });
});
