import { afterAll, describe, expect, it } from 'vitest';
import { DockerService } from '../../../pipeline/services/docker.js';
import { memoryLogger, testLabel } from '../../synthesize/harness.js';
import { dockerWorkers, suiteImage } from './suite-image.js';

/**
 * Fingerprints through validate's real Docker runner on both of the harness's tracers: Python 3.11
 * (bookworm: sys.settrace) and Python 3.13 (trixie: sys.monitoring). Three workloads share a
 * helper; one worker fingerprints them one after another, the first again at the end. Each
 * fingerprint holds the helper: under sys.monitoring a DISABLE returned during one fingerprint
 * used to outlive it, so the second and third missed every function the first had run, and a
 * change to a shared helper selected only the first workload.
 */
const label = testLabel('harness-fingerprint');
const docker = new DockerService({ runLabel: label });
const { log } = memoryLogger();

const CONFIG = JSON.stringify({ version: 1, project: 'shared', repo: '.', benchmark_dir: 'benchmarks', pythons: ['3'] });
const FILES = {
  'asv.conf.json': CONFIG,
  'shared/__init__.py': '',
  'shared/helper.py': 'def helper(n):\n    return sum(range(n))\n',
  'shared/api.py': 'from .helper import helper\n\ndef one():\n    return helper(10)\n\ndef two():\n    return helper(20) + 1\n',
  'benchmarks/__init__.py': '',
  'benchmarks/bench.py':
    'from shared.api import one, two\n\ndef time_one():\n    one()\n\ndef time_two():\n    two()\n\ndef time_both():\n    one()\n    two()\n',
};

afterAll(async () => {
  await docker.removeLabelled(label);
}, 120_000);

describe.each([
  ['perfmine/base:bookworm', '3.11', 'sys.settrace'],
  ['perfmine/base:trixie', '3.13', 'sys.monitoring'],
])('fingerprints in %s (Python %s, %s)', (from, python) => {
  it('records the shared helper in every workload a worker fingerprints, the first one again included', async () => {
    expect(await docker.imageExists(from), `${from} is missing: scripts/setup-test-env.sh builds it`).toBe(true);
    const image = await suiteImage(docker, `perfmine/test-harness-fingerprint:${label}-${python}`, FILES, { from });
    const { workers } = dockerWorkers(docker, log, { base: image, expert: image });
    const worker = await workers.open('base');
    try {
      expect(worker.start.event, JSON.stringify(worker.start).slice(0, 400)).toBe('ready');
      if (worker.start.event !== 'ready') return;
      expect(worker.start.python.startsWith(python)).toBe(true);
      const ref = (name: string) => worker.start.event === 'ready' && worker.start.workloads.find((w) => w.name === `bench.${name}`)!;
      const functions = async (name: string) => {
        const f = await worker.fingerprint(ref(name) as never, 60);
        expect(f.ok, JSON.stringify(f)).toBe(true);
        if (!f.ok) return [];
        // the checkout's functions, by file and first line
        return f.code
          .filter(([file]) => file.startsWith('/repo/shared/'))
          .map(([file, first]) => `${file.slice('/repo/shared/'.length)}:${first}`)
          .sort();
      };
      expect(await functions('time_one')).toEqual(['api.py:3', 'helper.py:1']);
      expect(await functions('time_two')).toEqual(['api.py:6', 'helper.py:1']);
      expect(await functions('time_both')).toEqual(['api.py:3', 'api.py:6', 'helper.py:1']);
      expect(await functions('time_one')).toEqual(['api.py:3', 'helper.py:1']);
    } finally {
      await worker.close();
    }
  }, 300_000);
});
