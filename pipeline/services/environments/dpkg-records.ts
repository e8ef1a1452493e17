/**
 * dpkg's records of what it installed, read from an image's tree: the installed packages'
 * versions (`/var/lib/dpkg/status`) and each package's files with their MD5
 * (`/var/lib/dpkg/info/<package>.md5sums`; conffiles are not listed there). Pure.
 */

export const DPKG_INFO_DIR = '/var/lib/dpkg/info';
export const DPKG_STATUS = '/var/lib/dpkg/status';

/** Installed packages' versions, by name and by `name:arch` (the name of their info files when Multi-Arch: same). */
export function installedVersions(status: string): Map<string, string> {
  const versions = new Map<string, string>();
  for (const paragraph of status.split(/\n\s*\n/)) {
    const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, 'm').exec(paragraph)?.[1]?.trim();
    const pkg = field('Package');
    const state = field('Status');
    const version = field('Version');
    if (!pkg || !version || state?.split(/\s+/)[2] !== 'installed') continue;
    versions.set(pkg, version);
    const arch = field('Architecture');
    if (arch) versions.set(`${pkg}:${arch}`, version);
  }
  return versions;
}

/** The package of an info file: `/var/lib/dpkg/info/libc6:amd64.md5sums` -> `libc6:amd64`; null for another path. */
export function md5sumsPackage(path: string): string | null {
  const m = /^\/var\/lib\/dpkg\/info\/([^/]+)\.md5sums$/.exec(path);
  return m ? m[1]! : null;
}

export interface PackagedFile {
  readonly pkg: string;
  readonly md5: string;
}

/** Every file the md5sums texts list (absolute path -> package and MD5), in the texts' order; a later listing of a path wins. */
export function packagedFiles(texts: ReadonlyMap<string, string>): Map<string, PackagedFile> {
  const files = new Map<string, PackagedFile>();
  for (const [path, text] of texts) {
    const pkg = md5sumsPackage(path);
    if (!pkg) continue;
    for (const line of text.split('\n')) {
      const m = /^([0-9a-f]{32}) [ *]?(.+)$/.exec(line.trimEnd());
      if (m) files.set(`/${m[2]!.replace(/^\/+/, '')}`, { pkg, md5: m[1]! });
    }
  }
  return files;
}
