import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerService, type RunResult } from '../../pipeline/services/docker.js';
import { ASV_FAKE_IMAGE, ensureAsvFakeImage } from '../fakes/asv-image.js';
import { parseAsvJson } from '../fakes/asv-json.js';
import { buildPythonRepo, correctScript, type PythonRepo } from '../fixtures/python-repo.js';
import { checkBenchmarksShape, checkResultsShape } from './asv-shape.js';
import { tempDir, testEnvironments, testLabel } from './harness.js';

const REAL = join(process.cwd(), '..', 'shared', 'reference', 'asv-real');
const REAL_RESULTS = [
  join(REAL, 'networkx-7971', 'aab03808-existing-py_usr_bin_python3.json'),
  join(REAL, 'networkx-7971', '3d0bb212-existing-py_usr_bin_python3.json'),
  join(REAL, 'rich-3399', 'r2x2', 'ab', '349042fd-existing-py_usr_bin_python3.json'),
];
const label = testLabel('asvfake');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('asvfake');
const limits = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };
let fixture: PythonRepo;
let image: string;
let run: RunResult;

const text = (path: string) => run.files.get(path)?.toString('utf8');

describe('the stand-in asv writes what real asv writes (shape)', () => {
  beforeAll(async () => {
    await ensureAsvFakeImage();
    fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'setup-py', commits: 1 }] });
    const envs = testEnvironments(docker, limits);
    const sourceImage = await envs.sourceFor(
      'fixture/asvfake',
      fixture.commits[0]!.sha,
      { kind: 'git', path: fixture.path },
      ASV_FAKE_IMAGE,
    );
    image = 'perfmine/env-fixture-asvfake:standin';
    const built = await envs.buildAndVerify(
      {
        repo: 'fixture/asvfake',
        sha: fixture.commits[0]!.sha,
        script: correctScript('setup-py'),
        sourceImage,
        baseImage: ASV_FAKE_IMAGE,
        importName: 'fixpkg',
        asvConfigPath: 'asv.conf.json',
        pythonVersion: '3.11',
      },
      image,
    );
    expect(built.failure).toBeNull();
    // The command line perfmine's measurement uses, in a fresh container without network.
    run = await docker.run({
      image,
      cmd: [
        'bash',
        '-c',
        'asv machine --yes --machine standin && asv run --python=same --set-commit-hash "$SHA" --record-samples --machine standin -a rounds=2 -a repeat=3',
      ],
      env: { SHA: fixture.commits[0]!.sha },
      workingDir: '/repo',
      network: 'none',
      timeoutMs: 180_000,
      limits,
      collect: ['/repo/.asv/results'],
    });
  }, 600_000);

  afterAll(async () => {
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it('says it is a stand-in, exits 2 because one benchmark fails, and writes the three files', () => {
    expect(run.stderr).toContain('asv stand-in (perfmine test fake, not airspeed velocity');
    expect(run.exitCode).toBe(2);
    const sha8 = fixture.commits[0]!.sha.slice(0, 8);
    expect([...run.files.keys()].sort()).toEqual([
      'results/benchmarks.json',
      `results/standin/${sha8}-existing-py_usr_bin_python3.json`,
      'results/standin/machine.json',
    ]);
  });

  it('the real asv files pass the shape checks', () => {
    for (const file of REAL_RESULTS) {
      const { problems, facts } = checkResultsShape(parseAsvJson(readFileSync(file, 'utf8')));
      expect(problems, file).toEqual([]);
      expect(facts.rowLengths.every((n) => n === 12)).toBe(true);
    }
    for (const d of ['networkx-7971', join('rich-3399', 'r2x2', 'ab')]) {
      expect(checkBenchmarksShape(parseAsvJson(readFileSync(join(REAL, d, 'benchmarks.json'), 'utf8'))).problems).toEqual([]);
    }
  });

  it('its results file has the real files’ shape: keys, result_columns, row lengths, parameter products, NaN and null', () => {
    const name = [...run.files.keys()].find((k) => k.endsWith('-existing-py_usr_bin_python3.json'))!;
    const standin = parseAsvJson(text(name)!) as Record<string, unknown>;
    const { problems, facts } = checkResultsShape(standin);
    expect(problems).toEqual([]);
    const real = checkResultsShape(parseAsvJson(readFileSync(REAL_RESULTS[0]!, 'utf8'))).facts;
    expect(facts.topKeys).toEqual(real.topKeys);
    expect(standin).toMatchObject({
      commit_hash: fixture.commits[0]!.sha,
      env_name: 'existing-py_usr_bin_python3',
      python: '/usr/bin/python3',
      version: 2,
    });
    expect(standin.date).toBe(Date.parse(fixture.commits[0]!.date));
    const results = standin.results as Record<string, unknown[]>;
    // time benchmarks: all 12 columns (profile dropped); mem / peakmem / track: 5 (stats and samples dropped).
    expect(Object.fromEntries(Object.entries(results).map(([k, v]) => [k, v.length]))).toEqual({
      'bench_core.BrokenSuite.time_broken': 5,
      'bench_core.MemSuite.mem_table': 5,
      'bench_core.MemSuite.peakmem_table': 5,
      'bench_core.TimeSuite.time_total': 12,
      'bench_core.time_checksum': 12,
      'bench_core.track_revision': 5,
    });
    const total = results['bench_core.TimeSuite.time_total']!;
    expect(total[1]).toEqual([
      ['10', '200'],
      ["'builtin'", "'loop'"],
    ]);
    expect((total[0] as number[]).length).toBe(4);
    expect(Number.isNaN((total[0] as number[])[1])).toBe(true); // (10, 'loop') is skipped: NaN
    expect((total[11] as (number[] | null)[]).map((s) => (s === null ? null : s.length))).toEqual([6, null, 6, 6]); // 2 rounds x 3
    expect(results['bench_core.BrokenSuite.time_broken']![0]).toBeNull();
    expect(results['bench_core.track_revision']![0]).toEqual([1]);
    expect(facts).toMatchObject({ failedCells: 0, skippedCells: 1, parameterized: 1 });
    expect(text(name)).toContain('NaN');
  });

  it('its benchmarks.json and machine.json have the real files’ keys', () => {
    const real = checkBenchmarksShape(parseAsvJson(readFileSync(join(REAL, 'networkx-7971', 'benchmarks.json'), 'utf8')));
    const mine = checkBenchmarksShape(parseAsvJson(text('results/benchmarks.json')!));
    expect(mine.problems).toEqual([]);
    expect(mine.keysByType.time).toEqual(real.keysByType.time);
    expect(Object.keys(mine.keysByType).sort()).toEqual(['memory', 'peakmemory', 'time', 'track']);
    const realMachine = JSON.parse(readFileSync(join(REAL, 'networkx-7971', 'machine.json'), 'utf8')) as Record<string, unknown>;
    const machine = JSON.parse(text('results/standin/machine.json')!) as Record<string, unknown>;
    expect(Object.keys(machine).sort()).toEqual(Object.keys(realMachine).sort());
    expect(machine).toMatchObject({ machine: 'standin', version: 1 });
  });

  it('leaves no perfmine container of this run behind', async () => {
    expect(await docker.containers(label)).toEqual([]);
    expect(readdirSync(REAL)).toContain('networkx-7971');
  });
});
