import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HARNESS_CONTAINER_PATH, HARNESS_SCRIPT, harnessTarEntries } from '../../../pipeline/services/environments/harness-files.js';
import { unpackToMap, packEntries } from '../../../pipeline/services/tar.js';

describe('harness files for a container', () => {
  it('packs the harness under perfmine/harness/, executable, byte for byte', async () => {
    const entries = harnessTarEntries();
    expect(entries.map((e) => e.name)).toEqual(['perfmine/harness/perfmine_harness.py']);
    expect(`/${entries[0]!.name}`).toBe(HARNESS_CONTAINER_PATH);
    expect(entries[0]!.mode).toBe(0o755);
    const files = await unpackToMap(packEntries(entries));
    expect(files.get('perfmine/harness/perfmine_harness.py')!.equals(readFileSync(HARNESS_SCRIPT))).toBe(true);
  });

  it('is a standard-library-only program for Python 3.8+ (no third-party import at module level)', () => {
    const text = readFileSync(HARNESS_SCRIPT, 'utf8');
    const imports = [...text.matchAll(/^(?:import|from) (\w+)/gm)].map((m) => m[1]!);
    const stdlib = new Set([
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
