import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  HARNESS_CONTAINER_PATH,
  HARNESS_SCRIPT,
  harnessTarEntries,
  SNAPSHOT_CONTAINER_PATH,
  SNAPSHOT_SCRIPT,
} from '../../../pipeline/services/environments/harness-files.js';
import { unpackToMap, packEntries } from '../../../pipeline/services/tar.js';

describe('harness files for a container', () => {
  it('packs the harness and the snapshot helper (which imports it) under perfmine/harness/, executable, byte for byte', async () => {
    const entries = harnessTarEntries();
    expect(entries.map((e) => `/${e.name}`)).toEqual([HARNESS_CONTAINER_PATH, SNAPSHOT_CONTAINER_PATH]);
    expect(entries.map((e) => e.mode)).toEqual([0o755, 0o755]);
    const files = await unpackToMap(packEntries(entries));
    expect(files.get('perfmine/harness/perfmine_harness.py')!.equals(readFileSync(HARNESS_SCRIPT))).toBe(true);
    expect(files.get('perfmine/harness/perfmine_snapshot.py')!.equals(readFileSync(SNAPSHOT_SCRIPT))).toBe(true);
  });

  it('both are standard-library-only programs for Python 3.8+ (no third-party import at module level)', () => {
    const text = readFileSync(HARNESS_SCRIPT, 'utf8') + readFileSync(SNAPSHOT_SCRIPT, 'utf8');
    const imports = [...text.matchAll(/^(?:import|from) (\w+)/gm)].map((m) => m[1]!).filter((m) => m !== 'perfmine_harness');
    const stdlib = new Set([
      'argparse',
      'base64',
      'copy',
      'errno',
      'hashlib',
      'importlib',
      'inspect',
      'itertools',
      'json',
      'math',
      'os',
      'pickle',
      'pkgutil',
      'platform',
      'random',
      're',
      'select',
      'shutil',
      'signal',
      'subprocess',
      'sys',
      'tempfile',
      'textwrap',
      'time',
      'timeit',
      'traceback',
    ]);
    expect(imports.filter((m) => !stdlib.has(m))).toEqual([]);
  });
});
