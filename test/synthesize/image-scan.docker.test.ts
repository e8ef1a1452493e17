import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImageInventories } from '../../cache/image-inventories.js';
import { openStore, type Db } from '../../cache/store.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { classifyFailure } from '../../pipeline/services/environments/failure.js';
import { forgetBaseInventories, scanImage, scanStepResult, type ImageScanResult } from '../../pipeline/services/environments/image-scan.js';
import type { TarEntry } from '../../pipeline/services/tar.js';
import { testLabel } from './harness.js';

/**
 * The check from outside on the real Docker engine: images built FROM the base, each planting one
 * change that alters what Python runs, are exported (never started) and refused with the file (or
 * the configuration's variable) named; images of normal builds (an editable install, a venv, a
 * wheel installed with pip, a Debian package installed with dpkg) are accepted. Builds run with no
 * network. Each scan's time is printed at the end (not asserted).
 */
const BASE_IMAGE = 'perfmine/base:bookworm';
const label = testLabel('image-scan');
const docker = new DockerService({ runLabel: label });
const times: { name: string; result: ImageScanResult }[] = [];
let db: Db;

/** A small package with a setuptools pyproject (Debian's setuptools in the base builds it offline). */
const PACKAGE: TarEntry[] = [
  {
    name: 'pkg/pyproject.toml',
    content:
      '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "scanpkg"\nversion = "0.1.0"\n',
  },
  { name: 'pkg/scanpkg/__init__.py', content: 'VALUE = 1\n' },
];

let sequence = 0;
async function build(name: string, lines: readonly string[], context: readonly TarEntry[] = []): Promise<string> {
  const tag = `perfmine/test-image-scan:${process.pid}-${++sequence}`;
  const result = await docker.buildImage({
    context: [{ name: 'Dockerfile', content: [`FROM ${BASE_IMAGE}`, ...lines, ''].join('\n') }, ...context],
    tag,
    network: 'none',
    timeoutMs: 240_000,
  });
  if (!result.ok) throw new Error(`building ${name} failed: ${result.error}\n${result.log}`);
  return tag;
}

async function scan(name: string, image: string, inventories: ImageInventories | null = null): Promise<ImageScanResult> {
  const result = await scanImage({ docker, baseImage: BASE_IMAGE, image, inventories });
  times.push({ name, result });
  return result;
}

beforeAll(async () => {
  await docker.ping();
  db = openStore(':memory:');
}, 60_000);

afterAll(async () => {
  const lines = times.map(
    ({ name, result: r }) =>
      `  ${name.padEnd(44)} ${r.verdict.padEnd(8)} ${(r.durationMs / 1000).toFixed(1).padStart(5)} s  ${r.filesRead} files  ${(r.bytesRead / 1024 / 1024).toFixed(0)} MiB` +
      (r.inventoryFrom === 'export' ? `  (base inventory read: ${(r.inventoryMs / 1000).toFixed(1)} s)` : ''),
  );
  process.stdout.write(`outside scan, per image:\n${lines.join('\n')}\n`);
  db?.close();
  await docker.removeLabelled(label);
}, 180_000);

describe('the outside scan (real Docker engine)', () => {
  it('reads the base once: kept in the store, read from it by a later process', async () => {
    const image = await build('ENV only', ['ENV PERFMINE_SCAN_TEST=1']);
    const inventories = new ImageInventories(db);
    forgetBaseInventories();
    const first = await scan('configuration only (first: base read)', image, inventories);
    expect(first).toMatchObject({ verdict: 'accepted', findings: [], inventoryFrom: 'export' });
    expect(inventories.get(first.baseImageId)?.tree.entries.size).toBeGreaterThan(1000);
    forgetBaseInventories();
    const second = await scan('configuration only (base from the store)', image, inventories);
    expect(second).toMatchObject({ verdict: 'accepted', inventoryFrom: 'store' });
    const third = await scan('configuration only (base in memory)', image, null);
    expect(third.inventoryFrom).toBe('process');
  }, 300_000);

  const refused: [string, string[], string][] = [
    [
      'sitecustomize in dist-packages',
      ['RUN echo "import os" > /usr/local/lib/python3.11/dist-packages/sitecustomize.py'],
      '/usr/local/lib/python3.11/dist-packages/sitecustomize.py',
    ],
    [
      "usercustomize in root's user site",
      [
        'RUN mkdir -p /root/.local/lib/python3.11/site-packages && echo "import os" > /root/.local/lib/python3.11/site-packages/usercustomize.py',
      ],
      '/root/.local/lib/python3.11/site-packages/usercustomize.py',
    ],
    [
      'a .pth with an executable line',
      [`RUN echo 'import os; os.environ.setdefault("PERFMINE_HOOKED", "1")' > /usr/local/lib/python3.11/dist-packages/zz-hook.pth`],
      '/usr/local/lib/python3.11/dist-packages/zz-hook.pth',
    ],
    [
      'a wrapper python3 in /usr/local/bin',
      [`RUN printf '#!/bin/sh\\nexec /usr/bin/python3.11 "$@"\\n' > /usr/local/bin/python3 && chmod +x /usr/local/bin/python3`],
      '/usr/local/bin/python3',
    ],
    ['/usr/bin/python3.11 replaced', [`RUN printf '\\0' >> /usr/bin/python3.11`], '/usr/bin/python3.11'],
    ['/etc/ld.so.preload', ['RUN echo /usr/local/lib/libhook.so > /etc/ld.so.preload'], '/etc/ld.so.preload'],
    ['ENV LD_PRELOAD', ['ENV LD_PRELOAD=/usr/local/lib/libhook.so'], 'ENV LD_PRELOAD'],
    ['ENV PYTHONSTARTUP', ['ENV PYTHONSTARTUP=/root/.pythonrc'], 'ENV PYTHONSTARTUP'],
    ['ENV PYTHONPATH', ['ENV PYTHONPATH=/opt/hooks'], 'ENV PYTHONPATH'],
    ['ENV PYTHONHOME', ['ENV PYTHONHOME=/usr'], 'ENV PYTHONHOME'],
    [
      'an edited /usr/lib/python3.11/timeit.py',
      [
        `RUN sed -i 's/default_number = 1000000/default_number = 1000001/' /usr/lib/python3.11/timeit.py && grep -q 1000001 /usr/lib/python3.11/timeit.py`,
      ],
      '/usr/lib/python3.11/timeit.py',
    ],
  ];

  it.each(refused)(
    'refuses %s, naming it',
    async (name, lines, path) => {
      const result = await scan(name, await build(name, lines));
      expect(result.verdict).toBe('tampered');
      expect(result.findings.map((f) => f.path)).toEqual([path]);
      const step = scanStepResult(result);
      expect(step).toMatchObject({ step: 'scan', ok: false });
      expect(classifyFailure([step])).toMatchObject({ step: 'scan', kind: 'environment-tampered' });
      expect(classifyFailure([step])?.headline).toContain(path);
    },
    300_000,
  );

  const accepted: [string, string[], TarEntry[]][] = [
    [
      'an editable install (setuptools finder .pth)',
      [
        'COPY pkg /src/pkg',
        'RUN python3 -m pip install -q --no-index --no-build-isolation --no-deps -e /src/pkg && python3 -c "import scanpkg"',
      ],
      PACKAGE,
    ],
    ['a venv with pip and setuptools', ['RUN python3 -m venv /opt/venv && /opt/venv/bin/python -c "import sys; print(sys.prefix)"'], []],
    [
      'a wheel built and installed with pip',
      [
        'COPY pkg /src/pkg',
        'RUN python3 -m pip wheel -q --no-index --no-build-isolation --no-deps -w /tmp/wheels /src/pkg && python3 -m pip install -q --no-index /tmp/wheels/scanpkg-0.1.0-py3-none-any.whl && rm -rf /tmp/wheels && python3 -c "import scanpkg"',
      ],
      PACKAGE,
    ],
    [
      'a Debian package installed with dpkg',
      [
        [
          'RUN mkdir -p /tmp/deb/DEBIAN /tmp/deb/usr/lib/python3/dist-packages /tmp/deb/usr/lib/python3.11',
          `printf 'Package: python3-scanfoo\\nVersion: 1.0\\nArchitecture: all\\nMaintainer: t <t@example.invalid>\\nDescription: scan test\\n' > /tmp/deb/DEBIAN/control`,
          'echo "X = 1" > /tmp/deb/usr/lib/python3/dist-packages/scanfoo.py',
          'echo "Y = 1" > /tmp/deb/usr/lib/python3.11/scanfoo_std.py',
          'dpkg-deb --build /tmp/deb /tmp/scanfoo.deb >/dev/null && dpkg -i /tmp/scanfoo.deb && rm -rf /tmp/deb /tmp/scanfoo.deb',
        ].join(' && '),
      ],
      [],
    ],
  ];

  it.each(accepted)(
    'accepts %s',
    async (name, lines, context) => {
      const result = await scan(name, await build(name, lines, context));
      expect(result.findings).toEqual([]);
      expect(result.verdict).toBe('accepted');
      expect(scanStepResult(result)).toMatchObject({ step: 'scan', ok: true });
    },
    300_000,
  );

  it('leaves no container behind', async () => {
    expect(await docker.containers(label)).toEqual([]);
  });
});
