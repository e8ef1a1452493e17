import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { verifierFiles } from '../../pipeline/services/environments/verifier-files.js';
import { harborTaskInputs } from '../../pipeline/services/verifier/task-inputs.js';
import { harborDatasetFiles } from '../../tasks/publish/harbor/harbor-dataset.js';
import {
  harborTaskConfig,
  harborTaskFiles,
  harborTaskToml,
  harborTimeouts,
  type HarborOptions,
} from '../../tasks/publish/harbor/harbor-task.js';
import { HARBOR_SCHEMA_VERSION, harborTaskConfigSchema } from '../../tasks/publish/harbor/task-config.js';
import { tomlDocument } from '../../tasks/publish/harbor/toml.js';
import { writeHarbor } from '../../tasks/publish/harbor/write-harbor.js';
import { exportableMonths } from '../../pipeline/cli/commands/publish.js';
import { tempDir } from '../helpers/harness.js';
import { BASE, IMPROVED, MONTH_TASKS, PATCH } from '../helpers/written-task.js';

/**
 * The Harbor export's layout (issue 30): a month of tasks like the demo's, assembled with emit's
 * own functions (task-files.ts, the source tier's files with perfmine-bench's task.json, a lock
 * with an index distribution and a build requirement, a sealed-history bundle), exported with
 * `harborDatasetFiles` and written with `writeHarbor`, then read back from disk as Harbor reads a
 * task: every task.toml parsed by a TOML 1.0 parser (smol-toml) and checked against Harbor's
 * documented schema (task-config.ts), the files where Harbor expects them (task.toml,
 * instruction.md, environment/ with the Dockerfile and everything it copies, solution/solve.sh,
 * tests/test.sh), the verifier's folder complete (MANIFEST.sha256 over every file of tests/).
 */

const OPTIONS: HarborOptions = {
  cpus: 2,
  memoryMb: 4096,
  storageMb: 20480,
  testTimeoutSeconds: 1800,
  pytestArgs: [],
  snapshotTimeoutSeconds: 900,
  snapshotCallSeconds: 60,
  buildTimeoutSeconds: 3600,
  verifierFiles: verifierFiles(),
  producer: 'perfmine 0.1.0',
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const mode = (path: string) => statSync(path).mode & 0o777;

describe('perfmine publish --format harbor: the layout, read back as Harbor reads a task', () => {
  const dir = tempDir('perfmine-harbor-');
  const first = writeHarbor(dir, harborDatasetFiles(MONTH_TASKS, OPTIONS));

  it('writes one task folder per task, named by its instance id', () => {
    expect(readdirSync(dir).sort()).toEqual(['README.md', 'demo__fastmath-101', 'demo__fastmath-107', 'demo__fastmath-108']);
    expect(first.written.length).toBeGreaterThan(0);
    // the dataset's README: the Harbor it needs, how its environments are had, the network
    const readme = readFileSync(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('3 performance-optimization tasks');
    expect(readme).toContain('2026-03-24');
    expect(readme).toContain('built from `environment/` (no prebuilt image');
    expect(readme).toContain('emit.publish.agentAllowedHosts');
    expect(first.removed).toEqual([]);
  });

  for (const t of MONTH_TASKS) {
    const id = t.row.instance_id;
    const root = join(dir, id);
    // in workloads.json's order (by name)
    const improved = [...IMPROVED[t.row.pull_number]!].sort();

    it(`${id}: the files where Harbor expects them`, () => {
      const files = filesUnder(root);
      for (const f of ['task.toml', 'instruction.md', 'environment/Dockerfile', 'solution/solve.sh', 'tests/test.sh'])
        expect(files).toContain(f);
      expect(files.every((f) => /^(task\.toml|instruction\.md|(environment|solution|tests)\/.+)$/.test(f))).toBe(true);
      for (const f of ['solution/solve.sh', 'tests/test.sh', 'tests/perfmine/verify.py', 'environment/usr/local/bin/perfmine-bench'])
        expect(mode(join(root, f)), f).toBe(0o755);
      // the oracle's patch reaches /solution; nothing of the solution or the verifier is in the image's build context
      expect(readFileSync(join(root, 'solution/expert.patch'), 'utf8')).toBe(PATCH);
      expect(files.filter((f) => f.startsWith('environment/') && /expert\.patch|verify|workloads\.json|metadata\.json/.test(f))).toEqual(
        [],
      );
      // scripts are valid bash; the verifier is Python 3.8
      execFileSync('bash', ['-n', join(root, 'solution/solve.sh')]);
      execFileSync('bash', ['-n', join(root, 'tests/test.sh')]);
      execFileSync('python3', [
        '-c',
        'import ast, sys; ast.parse(open(sys.argv[1]).read(), feature_version=(3, 8))',
        join(root, 'tests/perfmine/verify.py'),
      ]);
    });

    it(`${id}: task.toml parses as TOML 1.0 and follows Harbor's schema ${HARBOR_SCHEMA_VERSION}`, () => {
      const text = readFileSync(join(root, 'task.toml'), 'utf8');
      const parsed = parseToml(text);
      const config = harborTaskConfigSchema.parse(parsed);
      const timeouts = harborTimeouts(38_893, 3600);
      expect(config).toMatchObject({
        schema_version: HARBOR_SCHEMA_VERSION,
        source: 'perfmine',
        task: { name: `perfmine/${id}` },
        verifier: { timeout_sec: timeouts.verifier, user: 'root' },
        agent: { timeout_sec: timeouts.agent, user: 'agent' },
        environment: {
          build_timeout_sec: timeouts.build,
          cpus: 2,
          memory_mb: 4096,
          storage_mb: 20480,
          network_mode: 'no-network',
          allow_internet: false,
        },
      });
      // timeouts are written as floats, as Harbor's documentation writes them
      expect(text).toMatch(/^timeout_sec = \d+\.0$/m);
      expect(config.metadata).toMatchObject({
        source: 'perfmine',
        instance_id: id,
        repo: 'demo/fastmath',
        pull_number: t.row.pull_number,
        base_commit: BASE,
        difficulty: 'easy',
        improved_workloads: improved,
        measured_seconds: 38.9,
        reward_failure: -1,
        reward_floor: 0,
      });
      expect(config.metadata?.['category']).toBe(t.row.category ?? undefined);
      expect(String(config.metadata?.['reward_formula'])).toContain('ln S_agent / ln S_expert');
    });

    it(`${id}: environment/ is the task's sealed, locked Dockerfile with its whole build context and the agent's user`, () => {
      const dockerfile = readFileSync(join(root, 'environment/Dockerfile'), 'utf8');
      expect(dockerfile.startsWith(t.files['Dockerfile']!.trimEnd())).toBe(true);
      expect(dockerfile).toMatch(
        /^RUN useradd --create-home --user-group --shell \/bin\/bash agent && chown -R agent:agent \/repo && mkdir -m 700 \/tests$/m,
      );
      expect(dockerfile).toContain('--require-hashes');
      for (const line of dockerfile.split('\n').filter((l) => l.startsWith('COPY ') && !l.includes('--from'))) {
        const sources = line.split(/\s+/).slice(1, -1);
        for (const s of sources)
          expect(statSync(join(root, 'environment', s)).isFile() || statSync(join(root, 'environment', s)).isDirectory(), s).toBe(true);
      }
      expect(sha256(join(root, 'environment/source/repo.bundle'))).toBe(t.blobs['source/repo.bundle']!.sha256);
      expect(readFileSync(join(root, 'environment/docker_build.sh'), 'utf8')).toBe(t.files['docker_build.sh']);
    });

    it(`${id}: tests/ holds the verifier, its trusted inputs and a manifest of all of them`, () => {
      const tests = join(root, 'tests');
      const manifest = readFileSync(join(tests, 'MANIFEST.sha256'), 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => l.split('  ') as [string, string]);
      expect(manifest.map(([, p]) => p)).toEqual(filesUnder(tests).filter((f) => f !== 'MANIFEST.sha256'));
      for (const [hash, p] of manifest) expect(sha256(join(tests, p)), p).toBe(hash);
      expect(manifest.map(([, p]) => p)).toEqual(
        expect.arrayContaining([
          'test.sh',
          'docker_build.sh',
          'constraints.txt',
          'source/repo.bundle',
          'perfmine/verify.py',
          'perfmine/verify.json',
          'perfmine/seal.sh',
          'perfmine/bench/perfmine_bench.py',
          'perfmine/bench/perfmine_harness.py',
          'perfmine/bench/perfmine_snapshot.py',
          'perfmine/bench/perfmine_probe.py',
          'perfmine/bench/perfmine_channel.py',
          'perfmine/bench/perfmine_pytest_channel.py',
          'perfmine/bench/perfmine_detect.py',
          'perfmine/bench/perfmine_bench_account.py',
          'perfmine/expert.patch',
        ]),
      );
      // the expert's patch and the whole folder: their owner's alone (the container's /tests is root's alone too)
      expect(statSync(join(tests, 'perfmine/expert.patch')).mode & 0o777).toBe(0o600);
      expect(statSync(tests).mode & 0o777).toBe(0o700);
      expect(readFileSync(join(tests, 'perfmine/expert.patch'), 'utf8')).toBe(PATCH);
      // sha256sum itself accepts the manifest
      execFileSync('sha256sum', ['--quiet', '--strict', '--check', 'MANIFEST.sha256'], { cwd: tests });
      const spec = JSON.parse(readFileSync(join(tests, 'perfmine/verify.json'), 'utf8')) as Record<string, unknown>;
      expect(spec).toMatchObject({
        instance_id: id,
        base_commit: BASE,
        asv_config: 'asv.conf.json',
        python: 'python3.11',
        bundle: 'source/repo.bundle',
        build_script: 'docker_build.sh',
        constraints: 'constraints.txt',
        tests: { timeout_seconds: 1800, args: [] },
        snapshot: { timeout_seconds: 900, call_seconds: 60 },
        expert_patch: 'perfmine/expert.patch',
      });
      expect(spec['probe_seed']).toMatch(/^[0-9a-f]{32}$/);
      const workloads = spec['workloads'] as { name: string; improved: boolean; speedup: number }[];
      expect(workloads.filter((w) => w.improved).map((w) => w.name)).toEqual(improved);
      const test = readFileSync(join(tests, 'test.sh'), 'utf8');
      expect(test).toContain('--user nobody');
      expect(test).toContain('"${PERFMINE_PYTHON:-python3}" -I -S "$here/perfmine/verify.py"');
      // before anything else: the agent's processes gone, the folder emptied, the failure reward in place
      const first = (s: string) => test.indexOf(s);
      expect(first('kill -KILL')).toBeGreaterThan(0);
      expect(first('kill -KILL')).toBeLessThan(first('echo -1 > "$out/reward.txt"'));
      expect(first('echo -1 > "$out/reward.txt"')).toBeLessThan(first('sha256sum'));
    });

    it(`${id}: instruction.md tells the agent where it works, how it is judged and how to measure, then the statement`, () => {
      const text = readFileSync(join(root, 'instruction.md'), 'utf8');
      expect(text).toContain(`# ${id}`);
      expect(text).toContain('You work as the user `agent`, who owns /repo. There is no network.');
      expect(text).toContain('max(0, ln S / ln S_expert)');
      expect(text).toContain('fast only on the inputs it is timed with');
      for (const w of improved) expect(text).toContain(`\`${w}\``);
      expect(text).toContain('perfmine-bench compare --rebuild-working');
      expect(text.endsWith(t.row.problem_statement)).toBe(true);
      expect(text).not.toContain('score.sh');
    });
  }

  it('writes nothing when nothing changed; removes the folder of a task no longer published, and leaves the rest of the folder alone', () => {
    mkdirSync(join(dir, 'someone-else'), { recursive: true });
    writeFileSync(join(dir, 'someone-else', 'task.toml'), 'schema_version = "1.3"\n');
    const again = writeHarbor(dir, harborDatasetFiles(MONTH_TASKS, OPTIONS));
    expect(again.written).toEqual([]);
    expect(again.removed).toEqual([]);
    const fewer = writeHarbor(dir, harborDatasetFiles(MONTH_TASKS.slice(0, 2), OPTIONS));
    expect(fewer.written).toEqual(['README.md']);
    expect(fewer.removed.every((p) => p.startsWith('demo__fastmath-108/'))).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['README.md', 'demo__fastmath-101', 'demo__fastmath-107', 'someone-else']);
  });

  it('publish leaves out a task whose folder cannot be exported (from before the sealed format: no source/repo.bundle), naming it, and keeps the others', () => {
    const [good, old] = [MONTH_TASKS[0]!, { ...MONTH_TASKS[1]!, blobs: {} }];
    const funnel = { collected: 0, filtered: 0, classified: 0, built: 0, validated: 0, emitted: 2 };
    const kept = exportableMonths([{ month: '2025-04', tasks: [good, old], funnel }]);
    expect(kept.months[0]!.tasks).toEqual([good]);
    expect(kept.leftOut).toEqual([
      {
        instanceId: old.row.instance_id,
        month: '2025-04',
        reason: 'not-exportable',
        detail: expect.stringContaining(`${old.row.instance_id}: the task folder has no source/repo.bundle`) as string,
      },
    ]);
  });

  it("an agent that needs its model's API: those hosts while it works, the environment open for its setup, the verifier with no network; a pushed image as docker_image", () => {
    const task = {
      ...MONTH_TASKS[0]!,
      row: { ...MONTH_TASKS[0]!.row, docker_image: 'registry.example.org/perfmine/x@sha256:' + 'a'.repeat(64) },
    };
    const files = harborTaskFiles(task, { ...OPTIONS, agentAllowedHosts: ['api.openai.com'] });
    const toml = parseToml(String(files.get('task.toml')!.content)) as Record<string, Record<string, unknown>>;
    expect(toml['agent']).toMatchObject({ user: 'agent', network_mode: 'allowlist', allowed_hosts: ['api.openai.com'] });
    expect(toml['verifier']).toMatchObject({ user: 'root', network_mode: 'no-network' });
    expect(toml['environment']).toMatchObject({ network_mode: 'public', allow_internet: true, docker_image: task.row.docker_image });
    expect(toml['metadata']!['harbor_requires']).toContain('2026-03-24');
    // by default: no network anywhere, no docker_image
    const plain = parseToml(String(harborTaskFiles(MONTH_TASKS[0]!, OPTIONS).get('task.toml')!.content)) as Record<
      string,
      Record<string, unknown>
    >;
    expect(plain['agent']!['network_mode']).toBeUndefined();
    expect(plain['environment']).toMatchObject({ network_mode: 'no-network', allow_internet: false });
    expect(plain['environment']!['docker_image']).toBeUndefined();
  });
});

describe("task.toml's writer and schema", () => {
  it('writes strings every TOML parser reads back as they were, floats where asked, and leaves out what is null', () => {
    const tricky = 'a "quote", a back\\slash, a tab\t, a newline\n, a DEL \u007f, a NUL \u0000, é and 🚀';
    const text = tomlDocument(
      {
        s: tricky,
        n: 3,
        f: 600,
        g: 1.5,
        list: ['x', 'y'],
        none: null,
        table: { 'a.b': true, gone: undefined, inner: { k: 'v', t: 30, u: 2.5, count: 30 } },
      },
      { floats: new Set(['f', 'table.inner.t', 'table.inner.u']), comment: ['a comment'] },
    );
    expect(text.startsWith('# a comment\n')).toBe(true);
    expect(text).toContain('\nf = 600.0\n');
    expect(text).toContain('\nn = 3\n');
    expect(text).toMatch(/^\[table\.inner\]\nk = "v"\nt = 30\.0\nu = 2\.5\ncount = 30$/m);
    expect(text).toMatch(/\\u007f/i); // DEL escaped, as TOML requires
    expect(parseToml(text)).toEqual({
      s: tricky,
      n: 3,
      f: 600,
      g: 1.5,
      list: ['x', 'y'],
      table: { 'a.b': true, inner: { k: 'v', t: 30, u: 2.5, count: 30 } },
    });
  });

  it('writes task.toml so that reading it back gives the task config, with and without an agent allowlist', () => {
    for (const t of MONTH_TASKS)
      for (const agentAllowedHosts of [[], ['api.openai.com']]) {
        const config = harborTaskConfig(t, harborTaskInputs(t), { ...OPTIONS, agentAllowedHosts });
        expect(parseToml(harborTaskToml(config, t.row.instance_id))).toEqual(config);
      }
  });

  it("refuses what Harbor's schema does not have, and a network setting that contradicts itself", () => {
    const base = { schema_version: '1.3', environment: { network_mode: 'no-network' } };
    expect(harborTaskConfigSchema.safeParse(base).success).toBe(true);
    expect(harborTaskConfigSchema.safeParse({ ...base, environment: { network_mode: 'no-network', allow_internet: true } }).success).toBe(
      false,
    );
    expect(harborTaskConfigSchema.safeParse({ ...base, environment: { cpu: 2 } }).success).toBe(false);
    expect(harborTaskConfigSchema.safeParse({ ...base, agent: { timeout: 10 } }).success).toBe(false);
    expect(harborTaskConfigSchema.safeParse({ ...base, task: { name: 'no-org' } }).success).toBe(false);
    expect(harborTaskConfigSchema.safeParse({ ...base, task: { name: 'perfmine/a..b' } }).success).toBe(false);
  });

  it('gives the agent an hour and five measurements, the verifier two builds, half an hour and three measurements', () => {
    expect(harborTimeouts(38_893, 3600)).toEqual({ agent: 3840, verifier: 9120, build: 3600 });
    expect(harborTimeouts(null, 600)).toEqual({ agent: 6600, verifier: 4800, build: 1800 });
  });

  it("adds the reward's rounds to the verifier's limit when the protocol has fewer than 20", () => {
    // 4 rounds: 16 more of (at most) every workload on 3 of the 4 sides, 3 measurements' worth
    expect(harborTimeouts(40_000, 600, 4)).toEqual({ agent: 3840, verifier: 3240, build: 1800 });
    expect(harborTimeouts(40_000, 600, 20)).toEqual(harborTimeouts(40_000, 600));
  });
});
