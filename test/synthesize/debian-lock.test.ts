import { describe, expect, it } from 'vitest';
import type { StoredValidation } from '../../cache/measurements.js';
import { synthesizeOutputSchema } from '../../pipeline/concepts/records/synthesize-output.js';
import {
  DEBIAN_LOCK_LABEL,
  debianLockEntry,
  debianLockFromLabels,
  debianLockLabel,
  debianLockOf,
  lockedDebianInstallLines,
  parseDpkgList,
} from '../../pipeline/services/environments/debian-lock.js';
import { packageTierDockerfile } from '../../pipeline/services/environments/package-tier.js';
import { sourceTierFiles } from '../../pipeline/services/environments/source-tier.js';
import { assembleRow } from '../../stages/emit/row.js';
import { metadataJson, taskDockerfile } from '../../stages/emit/task-files.js';

/** Issue 36: a package tier's lock (what it installed or changed, at exact versions) and the task Dockerfile lines that install it. */

const BASE_LIST = [
  'amd64',
  'ii |bash|amd64|5.2.15-2+b2',
  'ii |libc6|amd64|2.36-9+deb12u9',
  'ii |tzdata|all|2024a-0+deb12u1',
  'rc |oldpkg|amd64|1.0-1',
  '',
].join('\n');

const TIER_LIST = [
  'amd64',
  'ii |bash|amd64|5.2.15-2+b2',
  // upgraded by the tier (a dependency needed a newer one)
  'ii |libc6|amd64|2.36-9+deb12u10',
  'ii |tzdata|all|2024a-0+deb12u1',
  'ii |libgeos-dev|amd64|3.11.1-1',
  'ii |libgeos3.11.1|amd64|3.11.1-1',
  'ii |geos-doc|all|1:3.11.1-1',
  // another architecture's package: apt-get must be told which
  'ii |libfoo1|i386|2.0~rc1-3',
  // known to dpkg but not installed: not part of the lock
  'un |libgeos-c1v5|amd64|3.11.1-1',
  'rc |oldpkg|amd64|1.0-1',
  '',
].join('\n');

describe('the Debian lock of a package tier (pure)', () => {
  it('reads what dpkg-query lists: the native architecture and the installed packages only', () => {
    const base = parseDpkgList(BASE_LIST);
    expect(base.native).toBe('amd64');
    expect(base.packages).toEqual([
      { name: 'bash', arch: 'amd64', version: '5.2.15-2+b2' },
      { name: 'libc6', arch: 'amd64', version: '2.36-9+deb12u9' },
      { name: 'tzdata', arch: 'all', version: '2024a-0+deb12u1' },
    ]);
    expect(() => parseDpkgList('')).toThrow(RangeError);
    expect(() => parseDpkgList('dpkg: error\n')).toThrow(RangeError);
  });

  it("locks every package the tier installed or upgraded, sorted, arch-qualified when neither native nor 'all'", () => {
    expect(debianLockOf(parseDpkgList(BASE_LIST), parseDpkgList(TIER_LIST))).toEqual([
      'geos-doc=1:3.11.1-1',
      'libc6=2.36-9+deb12u10',
      'libfoo1:i386=2.0~rc1-3',
      'libgeos-dev=3.11.1-1',
      'libgeos3.11.1=3.11.1-1',
    ]);
    // the same image on both sides: nothing to lock
    expect(debianLockOf(parseDpkgList(BASE_LIST), parseDpkgList(BASE_LIST))).toEqual([]);
    // a package the tier removed cannot be installed: it is not in the lock
    expect(debianLockOf(parseDpkgList(TIER_LIST), parseDpkgList(BASE_LIST))).toEqual(['libc6=2.36-9+deb12u9']);
    expect(() => debianLockEntry({ name: 'x1', arch: 'amd64', version: "1.0'; curl evil" }, 'amd64')).toThrow(RangeError);
  });

  it('keeps the lock in a label and reads it back; no label or a malformed one reads as none', () => {
    const lock = ['libgeos-dev=3.11.1-1', 'libfoo1:i386=2.0~rc1-3'];
    expect(debianLockFromLabels({ [DEBIAN_LOCK_LABEL]: debianLockLabel(lock) })).toEqual(lock);
    expect(debianLockFromLabels({ [DEBIAN_LOCK_LABEL]: debianLockLabel([]) })).toEqual([]);
    expect(debianLockFromLabels({ 'org.perfmine.packages': 'libgeos-dev' })).toBeNull();
    expect(debianLockFromLabels({ [DEBIAN_LOCK_LABEL]: 'libgeos-dev' })).toBeNull();
    expect(debianLockFromLabels({ [DEBIAN_LOCK_LABEL]: 'x=1;rm' })).toBeNull();
  });

  it('installs exactly the lock after a check that names a version the mirror no longer has', () => {
    const lines = lockedDebianInstallLines(['libgeos-dev'], ['libgeos-dev=3.11.1-1', 'libgeos3.11.1=3.11.1-1']);
    const words = "'libgeos-dev=3.11.1-1' 'libgeos3.11.1=3.11.1-1'";
    expect(lines).toEqual([
      "# the repository's Debian packages (libgeos-dev) at the versions its package tier installed (2 packages)",
      'ENV DEBIAN_FRONTEND=noninteractive',
      'RUN apt-get update \\',
      ` && missing=0 && for p in ${words}; do \\`,
      `      n="\${p%%=*}"; v="\${p#*=}"; has=$(apt-cache madison "$n" | awk -F'|' '{ gsub(/ /, "", $2); printf " %s", $2 }'); \\`,
      `      case "$has " in *" $v "*) ;; *) missing=1; echo "the Debian mirror no longer has $p (locked by this task); versions of $n it has:\${has:- none}; point /etc/apt/sources.list at a snapshot of the mirror that has it (https://snapshot.debian.org/)" >&2 ;; esac; \\`,
      '    done && [ "$missing" = 0 ] \\',
      ` && apt-get install -y --no-install-recommends ${words} \\`,
      ' && rm -rf /var/lib/apt/lists/*',
    ]);
    // the base image held every listed package already: nothing to install
    expect(lockedDebianInstallLines(['libgeos-dev'], [])).toEqual([]);
    expect(() => lockedDebianInstallLines(['x1'], ["x1=1' && curl evil '"])).toThrow(RangeError);
  });
});

describe("a task's Dockerfile and metadata with the tier's lock", () => {
  const row = assembleRow({
    repo: 'acme/geo',
    number: 7,
    baseSha: 'a'.repeat(40),
    mergeSha: 'b'.repeat(40),
    createdAt: '2025-04-02T10:00:00Z',
    mergedAt: '2025-04-30T23:59:59Z',
    problemStatement: '# Slow\n',
    patch: 'diff --git a/x b/x\n',
    imageName: 'perfmine/acme__geo:7',
    buildScript: 'pip install -e .\n',
    workloads: [],
    category: null,
    difficulty: null,
    classifier: 'heuristic',
  });
  const perfmineFiles = sourceTierFiles();
  const lock = ['libgeos-dev=3.11.1-1', 'libgeos3.11.1=3.11.1-1'];
  const tier = { baseImage: 'perfmine/base:bookworm', debianPackages: ['libgeos-dev'] };
  const dockerfile = (packageTier: typeof tier & { debianLock?: string[] }) =>
    taskDockerfile({
      row,
      baseImage: 'perfmine/pkgs-acme-geo:0123456789abcdef',
      pythonVersion: null,
      perfmineFiles,
      lock: null,
      packageTier,
    });

  it('installs the locked versions after its FROM the base image, and a record without a lock by name as before', () => {
    const locked = dockerfile({ ...tier, debianLock: lock }).split('\n');
    const unlocked = dockerfile(tier).split('\n');
    // a block of lines, in order, after the image's FROM (the second one: the first is the source stage's)
    const blockAt = (lines: string[], block: string[]) => lines.findIndex((_, i) => block.every((b, j) => lines[i + j] === b));
    const installs = (lines: string[]) => lines.filter((l) => l.includes('apt-get install'));
    const from = (lines: string[]) => lines.lastIndexOf('FROM perfmine/base:bookworm');
    expect(installs(locked)).toEqual([" && apt-get install -y --no-install-recommends 'libgeos-dev=3.11.1-1' 'libgeos3.11.1=3.11.1-1' \\"]);
    expect(blockAt(locked, lockedDebianInstallLines(tier.debianPackages, lock))).toBeGreaterThan(from(locked));
    // an old record: the tier's own lines, unchanged
    expect(installs(unlocked)).toEqual([' && apt-get install -y --no-install-recommends libgeos-dev \\']);
    expect(blockAt(unlocked, packageTierDockerfile(tier.baseImage, tier.debianPackages).trimEnd().split('\n').slice(1))).toBeGreaterThan(
      from(unlocked),
    );
    expect(from(locked)).toBeGreaterThan(0);
  });

  it('records the lock in metadata.json (environment.package_tier), and old synthesize records still parse', () => {
    const validation: StoredValidation = {
      key: 'k',
      decision: 'accepted',
      detail: '',
      pairs: 0,
      calibrationPairs: 0,
      machineFactors: [],
      calibrationFactors: [],
      calibrated: false,
      threshold: null,
      falsePositives: { flagged: null, compared: null, rate: null },
      asvCalibrationFlags: null,
      engine: 'perfmine',
      protocol: null,
      pairedOptions: null,
      mdsMedian: null,
      selection: null,
    };
    const metadata = JSON.parse(
      metadataJson({
        row,
        workloads: [],
        validation,
        baseImage: 'perfmine/pkgs-acme-geo:0123456789abcdef',
        verifiedImage: 'v',
        scriptSource: 'template',
        pythonVersion: null,
        repoUrl: 'https://github.com/acme/geo',
        provenance: { categorySource: null, categoryReason: null, statementSource: null, leakCheckBasis: 'diff' },
        perfmineFiles,
        sealedHistory: {},
        measuringTool: '',
        lock: null,
        packageTier: { ...tier, debianLock: lock },
      }),
    ) as { environment: { package_tier: unknown } };
    expect(metadata.environment.package_tier).toEqual({ ...tier, debianLock: lock });

    const output = {
      repo: 'acme/geo',
      sha: 'a'.repeat(40),
      commitDate: '2025-04-01T00:00:00Z',
      imageTag: 'i',
      script: 's',
      scriptSource: 'template',
      attemptId: 1,
      pythonVersion: null,
      repoImageTag: 'r',
      baseImage: 'perfmine/pkgs-acme-geo:0123456789abcdef',
      toolchainImage: 't',
      asvConfigPath: 'asv.conf.json',
      importName: null,
      cloneSource: 'git:/x',
    };
    expect(synthesizeOutputSchema.parse({ ...output, packageTier: tier }).packageTier).toEqual(tier);
    expect(synthesizeOutputSchema.parse({ ...output, packageTier: { ...tier, debianLock: lock } }).packageTier?.debianLock).toEqual(lock);
    expect(synthesizeOutputSchema.safeParse({ ...output, packageTier: { ...tier, debianLock: ['libgeos-dev 3.11'] } }).success).toBe(false);
  });
});
