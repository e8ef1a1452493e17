/**
 * The outside scan's rules: what in an environment image, compared with the base image it was
 * built on, changes what Python runs before or besides the measured code. Pure: two trees in,
 * findings out. Only what the image adds, changes or deletes relative to the base is judged; the
 * base is trusted as it is.
 *
 * A normal build passes: wheels installed with pip (into /usr/local/lib/python3.X/dist-packages),
 * an editable install of the repository (its finder `.pth`), a venv (symbolic links to the base's
 * interpreter), Debian packages installed with apt (files that match dpkg's checksums).
 */
import { DPKG_STATUS, installedVersions, md5sumsPackage, packagedFiles, type PackagedFile } from './dpkg-records.js';
import {
  basenameOf,
  changeOf,
  dirnameOf,
  envValue,
  joinPath,
  resolvePath,
  TEXT_LIMIT,
  type Change,
  type ImageTree,
  type TreeEntry,
} from '../../concepts/image-tree.js';
import { allowedPthHook, isExecutablePthLine } from './pth-hooks.js';

/** The rules, in the order their findings are reported (a path is named by the first rule that finds it). */
export const SCAN_RULES = [
  'image-env',
  'preload',
  'interpreter',
  'customize-hook',
  'pth-exec',
  'library-shadow',
  'package-file',
  'package-record',
  'stdlib',
  'bytecode',
] as const;
export type ScanRule = (typeof SCAN_RULES)[number];

export interface Finding {
  readonly rule: ScanRule;
  /** The file (absolute path in the image), or `ENV NAME` for the image's configuration. */
  readonly path: string;
  readonly detail: string;
}

/**
 * Variables of the image's configuration that make every process run code or load libraries it
 * would not otherwise: the dynamic linker's preloads, audit modules and search path; Python's
 * start-up file, module path, prefix, user site and library directory; the start-up file of a
 * non-interactive bash (BASH_ENV) and of sh (ENV). Refused when the image sets one the base does
 * not set to the same value.
 */
export const FORBIDDEN_IMAGE_ENV: readonly string[] = [
  'LD_PRELOAD',
  'LD_AUDIT',
  'LD_LIBRARY_PATH',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PYTHONPLATLIBDIR',
  'BASH_ENV',
  'ENV',
];

/** An interpreter's name: `python`, `python3`, `python3.11`, ... (not `python3-config`). */
const INTERPRETER_NAME = /^python(?:3[^/]*)?$/;
const CONFIG_SCRIPT = /-config$/;
const CUSTOMIZE_MODULE = /^(?:sitecustomize|usercustomize)(?:\.py|\.pyc|(?:\.[^/]*)?\.so)$/;
const CUSTOMIZE_PACKAGE = /^(?:sitecustomize|usercustomize)$/;
const SITE_DIR_NAME = /^(?:site-packages|dist-packages)$/;
const STDLIB_ZIP = /\/lib\/python3\d+\.zip$/;
const STDLIB_LANDMARK = /\/lib\/python3\.\d+\/os\.py$/;
const PYCACHE_FILE = /^(.*)\/__pycache__\/([^/.]+)\.[^/]*\.pyc$/;
const SONAME = /\.so\.\d+(?:\.\d+)*$/;
/** The dynamic linker's own directories (besides those /etc/ld.so.conf.d names). */
const LINKER_DIRS = ['/lib', '/lib64', '/usr/lib', '/usr/lib64', '/usr/local/lib'];
const MULTIARCH_DIR = /^\/(?:usr\/)?lib\/[a-z0-9_]+-linux-gnu[a-z0-9_]*$/;

/** The scan's view of two trees: each image path's change against the base, deletions, resolution. */
class Comparison {
  readonly changes = new Map<string, Exclude<Change, 'same'>>();
  readonly deleted: string[] = [];
  /** The base's standard library directories: each `lib/python3.X` that holds `os.py` (Debian's /usr/lib/python3.11, or /usr/local/...). */
  readonly stdlibDirs = new Set<string>();

  constructor(
    readonly base: ImageTree,
    readonly image: ImageTree,
  ) {
    for (const [path, entry] of image.entries) {
      const change = changeOf(base.entries.get(path), entry);
      if (change !== 'same') this.changes.set(path, change);
    }
    for (const path of base.entries.keys()) {
      if (!image.entries.has(path)) this.deleted.push(path);
      if (STDLIB_LANDMARK.test(path) && base.entries.get(path)?.type === 'file') this.stdlibDirs.add(dirnameOf(path));
    }
  }

  /** Whether a path is inside the base interpreter's standard library (not its site directories). */
  inStdlib(path: string): boolean {
    for (const dir of this.stdlibDirs) {
      if (!path.startsWith(`${dir}/`)) continue;
      return !/^(?:site-packages|dist-packages)(?:\/|$)/.test(path.slice(dir.length + 1));
    }
    return false;
  }

  /** Whether the image's entry at this (real) path is the base's. */
  same(path: string): boolean {
    return this.image.entries.has(path) && !this.changes.has(path);
  }

  /** Where a path leads in the image, and whether anything on the way or at the end differs from the base. */
  lookup(path: string): { real: string | null; touched: boolean } {
    const real = resolvePath(this.image.entries, path);
    if (real === null) return { real, touched: false };
    let touched = this.changes.has(real);
    // Every symbolic link followed on the way is a path of the image too.
    let current = path;
    for (let hops = 0; hops < 40 && !touched; hops++) {
      const entry = this.image.entries.get(current);
      if (!entry || entry.type !== 'symlink' || entry.target === undefined) break;
      touched = this.changes.has(current);
      current = joinPath(dirnameOf(current), entry.target);
    }
    return { real, touched };
  }

  /** The real path of a path's directory in a tree, and the name in it (dpkg's paths go through /bin -> usr/bin and the like). */
  realFile(tree: ImageTree, path: string, cache: Map<string, string | null>): string | null {
    const dir = dirnameOf(path);
    let real = cache.get(dir);
    if (real === undefined) {
      real = dir === '/' ? '/' : resolvePath(tree.entries, dir);
      cache.set(dir, real);
    }
    return real === null ? null : real === '/' ? `/${basenameOf(path)}` : `${real}/${basenameOf(path)}`;
  }
}

function describe(entry: TreeEntry | undefined): string {
  if (!entry) return 'nothing';
  if (entry.type === 'symlink') return `a symbolic link to ${entry.target ?? '?'}`;
  if (entry.type === 'file') return 'a regular file';
  return `a ${entry.type}`;
}

function imageEnvRule(c: Comparison): Finding[] {
  const findings: Finding[] = [];
  for (const name of FORBIDDEN_IMAGE_ENV) {
    const value = envValue(c.image.env, name);
    if (value === undefined || value === envValue(c.base.env, name)) continue;
    findings.push({ rule: 'image-env', path: `ENV ${name}`, detail: `the image's configuration sets ${name}=${value.slice(0, 200)}` });
  }
  return findings;
}

function preloadRule(c: Comparison): Finding[] {
  const path = '/etc/ld.so.preload';
  if (!c.image.entries.has(path) || c.same(path)) return [];
  const text = (c.image.texts.get(path) ?? '').trim().split('\n')[0] ?? '';
  return [
    { rule: 'preload', path, detail: `the dynamic linker loads ${text ? `${text.slice(0, 200)} ` : 'what it lists '}into every process` },
  ];
}

/** Whether a path leads, through symbolic links only, to the base's own interpreter file, unchanged. */
function isBaseInterpreter(c: Comparison, path: string): boolean {
  const real = resolvePath(c.image.entries, path);
  if (real === null) return false;
  const entry = c.image.entries.get(real);
  return entry?.type === 'file' && c.same(real) && INTERPRETER_NAME.test(basenameOf(real)) && !CONFIG_SCRIPT.test(real);
}

/** Directories whose programs are run by name: every `bin`/`sbin` directory, and those of the image's PATH. */
function pathDirs(c: Comparison): Set<string> {
  const dirs = new Set<string>();
  for (const dir of (envValue(c.image.env, 'PATH') ?? '').split(':')) {
    const real = dir.startsWith('/') ? resolvePath(c.image.entries, dir) : null;
    if (real) dirs.add(real);
  }
  return dirs;
}

function interpreterRule(c: Comparison): Finding[] {
  const findings: Finding[] = [];
  const onPath = pathDirs(c);
  for (const [path, change] of c.changes) {
    const name = basenameOf(path);
    if (!INTERPRETER_NAME.test(name) || CONFIG_SCRIPT.test(name)) continue;
    const dir = dirnameOf(path);
    if (!/^s?bin$/.test(basenameOf(dir)) && !onPath.has(dir)) continue;
    const entry = c.image.entries.get(path);
    if (entry?.type === 'directory') continue;
    if (entry?.type === 'symlink' && isBaseInterpreter(c, path)) continue;
    const real = entry?.type === 'symlink' ? resolvePath(c.image.entries, path) : null;
    const leads = real ? `leads to ${real}, not the base image's interpreter` : 'leads nowhere';
    const what =
      entry?.type === 'symlink' ? `${describe(entry)} that ${leads}` : `${describe(entry)}, not the base image's interpreter file`;
    findings.push({ rule: 'interpreter', path, detail: `${change}: ${what}` });
  }
  // A virtual environment's interpreter finds its standard library from `home` in its pyvenv.cfg.
  for (const path of c.changes.keys()) {
    if (basenameOf(path) !== 'pyvenv.cfg') continue;
    const text = c.image.texts.get(path) ?? '';
    const home = /^\s*home\s*=\s*(.*?)\s*$/im.exec(text)?.[1];
    const real = home && home.startsWith('/') ? resolvePath(c.image.entries, home) : null;
    if (real && ['python3', 'python'].some((n) => isBaseInterpreter(c, `${real}/${n}`))) continue;
    findings.push({
      rule: 'interpreter',
      path,
      detail: home
        ? `a virtual environment whose home ${home} holds no link to the base image's interpreter`
        : 'a virtual environment without a home',
    });
  }
  return findings;
}

/**
 * The directories Python searches at start-up, as real paths: the standard library's, every
 * site-packages / dist-packages directory (the system's, /usr/local's, users' and venvs'), the
 * directories the `.pth` files there add, and PYTHONPATH's.
 */
function searchDirs(c: Comparison): { search: Set<string>; site: Set<string> } {
  const site = new Set<string>();
  const search = new Set<string>();
  const add = (set: Set<string>, dir: string) => {
    const real = resolvePath(c.image.entries, dir);
    if (real && c.image.entries.get(real)?.type === 'directory') set.add(real);
  };
  for (const [path, entry] of c.image.entries) {
    if (entry.type !== 'directory') continue;
    if (SITE_DIR_NAME.test(basenameOf(path))) {
      add(site, path);
      add(search, path);
    } else if (/^\/usr(?:\/local)?\/lib\/python3\.\d+$/.test(path) || c.stdlibDirs.has(path)) {
      add(search, path);
      add(search, `${path}/lib-dynload`);
    }
  }
  for (const [path, text] of c.image.texts) {
    if (!path.endsWith('.pth') || !site.has(dirnameOf(path))) continue;
    for (const line of text.split('\n')) {
      if (line.startsWith('#') || line.trim() === '' || isExecutablePthLine(line)) continue;
      add(search, joinPath(dirnameOf(path), line.trimEnd()));
    }
  }
  for (const dir of (envValue(c.image.env, 'PYTHONPATH') ?? '').split(':')) if (dir.startsWith('/')) add(search, dir);
  return { search, site };
}

function customizeRule(c: Comparison, search: ReadonlySet<string>): Finding[] {
  const findings: Finding[] = [];
  for (const path of c.image.entries.keys()) {
    const dir = dirnameOf(path);
    const name = basenameOf(path);
    let module: string | null = null;
    if (search.has(dir) && CUSTOMIZE_MODULE.test(name)) module = path;
    else if (search.has(dir) && CUSTOMIZE_PACKAGE.test(name)) module = path;
    else {
      // Inside a package `sitecustomize/`, or the module's bytecode in __pycache__.
      const parent = dirnameOf(dir);
      if (search.has(parent) && CUSTOMIZE_PACKAGE.test(basenameOf(dir))) module = dir;
      else if (basenameOf(dir) === '__pycache__' && search.has(parent) && /^(?:sitecustomize|usercustomize)\./.test(name)) module = path;
    }
    if (module === null) continue;
    const { real, touched } = c.lookup(path);
    if (real === null || !touched) continue;
    const change = c.changes.get(path);
    findings.push({
      rule: 'customize-hook',
      path: module,
      detail:
        real !== path && !c.changes.has(path)
          ? `Python runs it at every start, and what it leads to (${real}) is not the base's`
          : `Python runs it at every start (${change === 'new' ? 'new' : 'changed'} in the image; ${dir} is on its search path)`,
    });
  }
  return dedupe(findings);
}

function pthRule(c: Comparison, site: ReadonlySet<string>): Finding[] {
  const findings: Finding[] = [];
  for (const path of c.image.entries.keys()) {
    if (!path.endsWith('.pth') || !site.has(dirnameOf(path))) continue;
    const { real, touched } = c.lookup(path);
    if (real === null || !touched) continue;
    const text = c.image.texts.get(real);
    if (text === undefined || c.image.cutTexts.has(real)) {
      findings.push({
        rule: 'pth-exec',
        path,
        detail: text === undefined ? `its text (${real}) was not read` : `longer than ${TEXT_LIMIT} bytes: not read to its end`,
      });
      continue;
    }
    const lines = text.split('\n');
    const refused = lines
      .map((line, i) => ({ line: line.replace(/\r$/, ''), number: i + 1 }))
      .filter(({ line }) => isExecutablePthLine(line) && !allowedPthHook(basenameOf(path), line));
    const first = refused[0];
    if (!first) continue;
    findings.push({
      rule: 'pth-exec',
      path,
      detail: `line ${first.number} runs at every start and is no known packaging hook: ${first.line.slice(0, 200)}${refused.length > 1 ? ` (and ${refused.length - 1} more such lines)` : ''}`,
    });
  }
  return findings;
}

/** A new file with the name of one of the base's shared libraries in a directory the dynamic linker searches. */
function libraryShadowRule(c: Comparison, packaged: ReadonlyMap<string, PackagedFile>): Finding[] {
  const dirsOf = (tree: ImageTree, extra: readonly string[]) => {
    const dirs = new Set<string>();
    for (const dir of [...LINKER_DIRS, ...extra]) {
      const real = resolvePath(tree.entries, dir);
      if (real) dirs.add(real);
    }
    for (const [path, entry] of tree.entries) if (entry.type === 'directory' && MULTIARCH_DIR.test(path)) dirs.add(path);
    return dirs;
  };
  const configured: string[] = [];
  for (const [path, text] of c.image.texts) {
    if (!path.startsWith('/etc/ld.so.conf')) continue;
    for (const line of text.split('\n')) if (line.trim().startsWith('/')) configured.push(line.trim());
  }
  const baseNames = new Set<string>();
  const baseDirs = dirsOf(c.base, []);
  for (const path of c.base.entries.keys()) if (SONAME.test(path) && baseDirs.has(dirnameOf(path))) baseNames.add(basenameOf(path));
  const imageDirs = dirsOf(c.image, configured);
  const findings: Finding[] = [];
  for (const [path, change] of c.changes) {
    if (change !== 'new' || !imageDirs.has(dirnameOf(path)) || !baseNames.has(basenameOf(path))) continue;
    const entry = c.image.entries.get(path);
    const record = packaged.get(path);
    if (entry?.type === 'directory' || (record && entry?.md5 === record.md5)) continue;
    if (entry?.type === 'symlink') {
      // A link to a file that dpkg installed (apt's libraries' own links) is the package's.
      const real = resolvePath(c.image.entries, path);
      const target = real ? c.image.entries.get(real) : undefined;
      const targetRecord = real ? packaged.get(real) : undefined;
      if (real && (c.same(real) || (targetRecord && target?.md5 === targetRecord.md5))) continue;
    }
    findings.push({
      rule: 'library-shadow',
      path,
      detail: `${describe(entry)} named like the base's library ${basenameOf(path)}, where the dynamic linker looks for it; not from a Debian package`,
    });
  }
  return findings;
}

/** dpkg's listed files of the image, by real path in the image, and the base's by real path in the base. */
function packagedByRealPath(c: Comparison): { image: Map<string, PackagedFile>; base: Map<string, PackagedFile> } {
  const byReal = (tree: ImageTree) => {
    const cache = new Map<string, string | null>();
    const out = new Map<string, PackagedFile>();
    for (const [path, record] of packagedFiles(tree.texts)) {
      const real = c.realFile(tree, path, cache);
      out.set(real ?? path, record);
    }
    return out;
  };
  return { image: byReal(c.image), base: byReal(c.base) };
}

function packageFileRule(c: Comparison, image: ReadonlyMap<string, PackagedFile>, base: ReadonlyMap<string, PackagedFile>): Finding[] {
  const findings: Finding[] = [];
  for (const [path, record] of image) {
    const entry = c.image.entries.get(path);
    const before = c.base.entries.get(path);
    if (!entry) {
      if (before && before.type !== 'directory')
        findings.push({ rule: 'package-file', path, detail: `deleted: a file of Debian package ${record.pkg} that the base image has` });
      continue;
    }
    const change = c.changes.get(path);
    if (!change) continue;
    if (entry.type !== 'file') {
      findings.push({ rule: 'package-file', path, detail: `a file of Debian package ${record.pkg}, replaced by ${describe(entry)}` });
    } else if (entry.md5 === undefined) {
      findings.push({
        rule: 'package-file',
        path,
        detail: `a file of Debian package ${record.pkg}, changed with the size and time of the base's file: not the recorded content`,
      });
    } else if (entry.md5 !== record.md5) {
      findings.push({
        rule: 'package-file',
        path,
        detail: `a file of Debian package ${record.pkg} that does not match its recorded checksum (md5 ${entry.md5}, recorded ${record.md5})`,
      });
    }
  }
  for (const [path, record] of base) {
    if (image.has(path)) continue;
    const entry = c.image.entries.get(path);
    if (!entry || !c.changes.has(path) || entry.type === 'directory') continue;
    findings.push({
      rule: 'package-file',
      path,
      detail: `a file of the base's Debian package ${record.pkg}, changed, and no package records it any more`,
    });
  }
  return findings;
}

function packageRecordRule(c: Comparison): Finding[] {
  const baseStatus = c.base.texts.get(DPKG_STATUS);
  if (baseStatus === undefined) return [];
  const imageStatus = c.image.texts.get(DPKG_STATUS);
  if (imageStatus === undefined)
    return [{ rule: 'package-record', path: DPKG_STATUS, detail: "dpkg's status is gone: which packages are installed cannot be known" }];
  const before = installedVersions(baseStatus);
  const now = installedVersions(imageStatus);
  const findings: Finding[] = [];
  for (const path of c.base.texts.keys()) {
    const pkg = md5sumsPackage(path);
    if (!pkg || c.same(path)) continue;
    const version = now.get(pkg);
    if (version === undefined || version !== before.get(pkg)) continue;
    findings.push({
      rule: 'package-record',
      path,
      detail: `the checksums of Debian package ${pkg} ${version} ${c.image.entries.has(path) ? 'changed' : 'are gone'} while its version did not`,
    });
  }
  return findings;
}

function stdlibRule(c: Comparison, packaged: ReadonlyMap<string, PackagedFile>): Finding[] {
  const findings: Finding[] = [];
  const matchesRecord = (path: string) => {
    const record = packaged.get(path);
    return record !== undefined && c.image.entries.get(path)?.md5 === record.md5;
  };
  for (const [path, change] of c.changes) {
    const entry = c.image.entries.get(path);
    if (entry?.type === 'directory') continue;
    if (change === 'new' && (STDLIB_ZIP.test(path) || STDLIB_LANDMARK.test(path)) && !matchesRecord(path)) {
      findings.push({
        rule: 'stdlib',
        path,
        detail: 'a second standard library: an interpreter whose prefix is here imports it instead of the base',
      });
      continue;
    }
    if (!c.inStdlib(path)) continue;
    if (change === 'changed') {
      findings.push({ rule: 'stdlib', path, detail: `the base's standard library file, changed (now ${describe(entry)})` });
      continue;
    }
    if (matchesRecord(path)) continue;
    // Bytecode that dpkg's py3compile wrote for a newly installed package's module.
    const pyc = PYCACHE_FILE.exec(path);
    if (pyc && c.changes.get(`${pyc[1]}/${pyc[2]}.py`) === 'new' && matchesRecord(`${pyc[1]}/${pyc[2]}.py`)) continue;
    findings.push({ rule: 'stdlib', path, detail: `new in the standard library and not from a Debian package: ${describe(entry)}` });
  }
  for (const path of c.deleted) {
    const entry = c.base.entries.get(path);
    if (!c.inStdlib(path) || entry?.type === 'directory' || PYCACHE_FILE.test(path)) continue;
    findings.push({ rule: 'stdlib', path, detail: "deleted: the base's standard library file" });
  }
  return findings;
}

function bytecodeRule(c: Comparison): Finding[] {
  const findings: Finding[] = [];
  for (const [path, change] of c.changes) {
    const m = PYCACHE_FILE.exec(path);
    if (!m) continue;
    const source = `${m[1]}/${m[2]}.py`;
    if (!c.base.entries.has(source) || !c.same(source)) continue;
    findings.push({
      rule: 'bytecode',
      path,
      detail: `${change === 'new' ? 'new' : 'changed'} bytecode of the base's ${source}, which is unchanged: Python runs this instead of the source`,
    });
  }
  return findings;
}

function dedupe(findings: readonly Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.rule}\n${f.path}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Every finding of the scanned image against its base: one per path (the first rule in
 * SCAN_RULES that finds it), in SCAN_RULES order and by path within a rule.
 */
export function scanFindings(base: ImageTree, image: ImageTree): Finding[] {
  const c = new Comparison(base, image);
  const { search, site } = searchDirs(c);
  const packaged = packagedByRealPath(c);
  const all = [
    ...imageEnvRule(c),
    ...preloadRule(c),
    ...interpreterRule(c),
    ...customizeRule(c, search),
    ...pthRule(c, site),
    ...libraryShadowRule(c, packaged.image),
    ...packageFileRule(c, packaged.image, packaged.base),
    ...packageRecordRule(c),
    ...stdlibRule(c, packaged.image),
    ...bytecodeRule(c),
  ];
  const byPath = new Map<string, Finding>();
  for (const f of all) {
    const held = byPath.get(f.path);
    if (!held || SCAN_RULES.indexOf(f.rule) < SCAN_RULES.indexOf(held.rule)) byPath.set(f.path, f);
  }
  return [...byPath.values()].sort((a, b) => SCAN_RULES.indexOf(a.rule) - SCAN_RULES.indexOf(b.rule) || (a.path < b.path ? -1 : 1));
}
