import { mkdirSync } from 'node:fs';
import { writeDistributions } from '../services/package-index/dist-directory.js';
import { buildWheel } from '../services/package-index/wheel.js';
import { monthWindow } from '../window.js';

/**
 * The demo's package index: the sample repository depends on `numtheory`, a small generated
 * package published in two versions on either side of the demo month, with an incompatible API
 * between them (1.0 offers `isqrt_floor`, 2.0 renamed it `isqrt`). Built as of a commit of the
 * month, an environment gets 1.0 and imports; built with whatever the index serves today, it gets
 * 2.0 and `import fastmath` fails. The demo serves this directory as a loopback PEP 691/503 index
 * (local-index.ts) and its builds reach it only through the index time machine. Pure but for the
 * files it writes.
 */
export const SAMPLE_DEPENDENCY = 'numtheory';

export interface SampleRelease {
  readonly version: string;
  readonly uploaded: string;
  /** What the module offers: 1.x `isqrt_floor`, 2.x `isqrt`. */
  readonly api: 'isqrt_floor' | 'isqrt';
}

/** 1.0 thirty days before the month starts, 2.0 thirty days after it ends. */
export function sampleReleases(month: string): SampleRelease[] {
  const w = monthWindow(month);
  const day = 86_400_000;
  return [
    { version: '1.0', uploaded: new Date(Date.parse(w.start) - 30 * day).toISOString(), api: 'isqrt_floor' },
    { version: '2.0', uploaded: new Date(Date.parse(w.end) + 30 * day).toISOString(), api: 'isqrt' },
  ];
}

/** Writes the wheels and their index.json (upload times) into `dir`. */
export function writeSampleIndex(dir: string, month: string): SampleRelease[] {
  mkdirSync(dir, { recursive: true });
  const releases = sampleReleases(month);
  writeDistributions(
    dir,
    releases.map((r) => {
      const wheel = buildWheel({
        name: SAMPLE_DEPENDENCY,
        version: r.version,
        summary: `Integer helpers for the perfmine demo (${r.version})`,
        requiresPython: '>=3.8',
        files: {
          'numtheory/__init__.py': `"""numtheory ${r.version}: integer helpers for the perfmine demo."""\n\nVERSION = ${JSON.stringify(r.version)}\n\n\ndef ${r.api}(n):\n    """The integer square root of n."""\n    x = int(n ** 0.5)\n    while x * x > n:\n        x -= 1\n    while (x + 1) * (x + 1) <= n:\n        x += 1\n    return x\n`,
        },
      });
      return { filename: wheel.filename, bytes: wheel.bytes, uploadTime: r.uploaded, requiresPython: '>=3.8' };
    }),
  );
  return releases;
}
