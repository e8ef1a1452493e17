import { execFile } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Dockerode from 'dockerode';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../cache/store.js';
import { ReplayStore } from '../../cache/replays.js';
import { runPublish, type PublishRun } from '../../pipeline/cli/commands/publish.js';
import { createContext } from '../../pipeline/context.js';
import { readCredentials } from '../../pipeline/credentials.js';
import { createSampleRepo } from '../../pipeline/demo/sample-repo.js';
import { SAMPLE_DEPENDENCY, writeSampleIndex } from '../../pipeline/demo/sample-index.js';
import { startLocalIndex } from '../../pipeline/services/package-index/local-index.js';
import { Metrics } from '../../pipeline/metrics.js';
import { runPipeline } from '../../pipeline/orchestrate.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { RegistryApi, registryBaseUrl } from '../../pipeline/services/registry/registry-api.js';
import { parseImageRef } from '../../pipeline/services/registry/image-ref.js';
import { monthWindow } from '../../pipeline/window.js';
import { readFolderReplays } from '../../pipeline/concepts/replay-files.js';
import { replayTask } from '../../tasks/replay/replay-task.js';
import { dockerfileBases } from '../../pipeline/services/registry/dockerfile-bases.js';
import { harborTrial, sh, shown, type Trial } from '../helpers/harbor-trial.js';
import { snapshotTree } from '../helpers/fs-snapshot.js';
import { measurementSlot } from '../helpers/measure-slot.js';
import { memoryLogger, tempDir, testConfig, testLabel } from '../synthesize/harness.js';

/**
 * Issue 36: tasks that run on a machine that never ran perfmine. The sample repository's demo
 * tasks through every stage, then `perfmine publish --registry` to the loopback registry (Harbor
 * tasks and the Hugging Face folder), and another machine simulated by a second Docker engine with
 * an empty data directory (scripts/second-engine.sh) that reaches only the registry:
 *
 * - every image is named by digest (task.toml's docker_image, the Dockerfile's FROM, the rows) and
 *   whole in the registry; publishing again pushes nothing;
 * - there, each task's environment/ builds as Harbor builds it (docker-compose build, no build
 *   arguments), and its docker_image pulls; in it, as the agent with no network, tmux starts and
 *   perfmine-bench lists the workloads;
 * - there, the oracle's trial from docker_image gets the expert's reward, and `perfmine replay` of
 *   the published folder replicates;
 * - a registry that lost an image: replay names it and records nothing; publish pushes it again
 *   and checks it whole; a registry that cannot be reached: publish names the image it could not
 *   push and leaves the published folder as it was.
 */
// exclusive: the oracle's reward is asserted near 1, which needs the machine's power; beside the
// attack suite (a CPU hog among its agents) #101's oracle read a reward of 0 once (stop 42's first
// rehearsal), where alone it reads 1.0
measurementSlot('exclusive');

const execFileP = promisify(execFile);
const REPO = 'fixture/fastmath';
const PRS = [101, 107, 108];
const IDS = PRS.map((n) => `fixture__fastmath-${n}`);
const ID = 'fixture__fastmath-101';
const BASE_IMAGE = 'perfmine/base:bookworm';
const REGISTRY_HOST = '127.0.0.1:5000';
const label = testLabel('portable');
const PREFIX = `t-${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
const REGISTRY = `${REGISTRY_HOST}/${PREFIX}`;
const docker = new DockerService({ runLabel: label, metrics: new Metrics() });
const dir = tempDir('portable-docker');
const out = join(dir, 'out');
const dbPath = join(dir, 'perfmine.db');
const harborDir = join(dir, 'harbor');
const hfDir = join(dir, 'hf');
const configFile = join(dir, 'perfmine.config.json');
const { log, lines } = memoryLogger('info');
const indexDir = join(dir, 'index');
const settings = {
  out,
  llm: { mode: 'none' },
  docker: { baseImage: BASE_IMAGE, cpus: 2, memoryMb: 2048, pidsLimit: 512, concurrency: 1 },
  // validate's own rounds (its adaptive looks stop early on clear verdicts): #108's 1.3x must be
  // told apart from none beside the other suites that measure
} as const;
const config = testConfig(dbPath, settings);
const api = new RegistryApi();
const globals = { db: dbPath, out, config: configFile, json: true };

let other: string;
let otherDocker: DockerService;
let harborRun: PublishRun;
let hfRun: PublishRun;
let again: PublishRun;

/** `perfmine replay` of a folder, once, against the other engine, recorded in `db`. */
function replayOnOther(folder: string, db: Db, note: string | null) {
  return replayTask(folder, {
    docker: otherDocker,
    config,
    log,
    store: new ReplayStore(db),
    times: 1,
    indexUrl: null,
    noCache: false,
    keepImages: false,
    note,
    version: 'test',
  });
}

async function script(args: string[]): Promise<string> {
  const r = await execFileP('bash', args, { cwd: process.cwd(), maxBuffer: 16 * 1024 * 1024 });
  return r.stdout.trim();
}

function taskToml(id: string): { environment: { docker_image?: string; network_mode: string }; agent: { user: string } } {
  return parseToml(readFileSync(join(harborDir, id, 'task.toml'), 'utf8')) as never;
}

beforeAll(async () => {
  // the demo's month: its package depends on a library only the demo's own index serves, so the
  // tasks carry that wheel (emit.vendorWheels) and build with no index anywhere else
  const sample = createSampleRepo(join(dir, 'fastmath'), '2025-04', { dependency: SAMPLE_DEPENDENCY });
  writeSampleIndex(indexDir, '2025-04');
  const index = await startLocalIndex({ dir: indexDir });
  const db: Db = openStore(dbPath);
  try {
    const built = testConfig(dbPath, { ...settings, synthesize: { buildNetwork: 'index', index: { upstream: index.url } } });
    const ctx = createContext({ config: built, credentials: readCredentials({}), db, log, metrics: new Metrics(), services: { docker } });
    const result = await runPipeline(ctx, {
      window: monthWindow('2025-04'),
      repos: [REPO],
      prs: PRS,
      source: { kind: 'git', path: sample.path },
    });
    if (result.reports.some((r) => Object.keys(r.failed).length > 0)) console.log(lines.join(''));
  } finally {
    db.close();
    await index.close();
  }
  rmSync(indexDir, { recursive: true, force: true });
  writeFileSync(configFile, JSON.stringify({ emit: { publish: { minReplays: 0 } }, docker: { cpus: 2, memoryMb: 2048 } }));
  harborRun = await runPublish({ to: harborDir, format: 'harbor', registry: REGISTRY }, globals, { docker });
  hfRun = await runPublish({ to: hfDir, registry: REGISTRY }, globals, { docker });
  again = await runPublish({ to: harborDir, format: 'harbor', registry: REGISTRY }, globals, { docker });
  other = await script(['scripts/second-engine.sh', 'start']);
  otherDocker = new DockerService({
    runLabel: label,
    metrics: new Metrics(),
    docker: new Dockerode({ socketPath: other.replace(/^unix:\/\//, '') }),
  });
}, 3_600_000);

afterAll(async () => {
  await script(['scripts/second-engine.sh', 'stop']).catch(() => undefined);
  // this suite's repositories in the registry, and the local names publish gave the images
  for (const ref of [...(harborRun?.images?.pushed ?? [])]) {
    const r = parseImageRef(ref);
    if (r?.digest && r.registry)
      await fetch(`${registryBaseUrl(r.registry)}/${r.repository}/manifests/${r.digest}`, { method: 'DELETE' }).catch(() => undefined);
  }
  const local = await sh(['images', '--format', '{{.Repository}}:{{.Tag}}', `${REGISTRY}/*/*`]);
  for (const name of local.out.split('\n').filter(Boolean)) await sh(['rmi', '-f', name]);
  await sh(['rmi', '-f', `${REGISTRY}/perfmine/base:bookworm`]);
  await docker.removeLabelled(label);
  rmSync(dir, { recursive: true, force: true });
}, 600_000);

describe("tasks that run anywhere (the demo's tasks, a second Docker engine, the loopback registry)", () => {
  it('publish names every image by digest, whole in the registry; publishing again pushes nothing', async () => {
    expect(harborRun.months).toEqual([{ month: '2025-04', tasks: PRS.length }]);
    expect(harborRun.images!.pushed).toHaveLength(1 + PRS.length);
    expect(hfRun.images!.pushed).toEqual([]);
    expect(again.images!.pushed).toEqual([]);
    expect(again.written).toEqual([]);
    const toml = taskToml(ID);
    const image = toml.environment.docker_image!;
    expect(image).toMatch(new RegExp(`^${REGISTRY.replace(/\./g, '\\.')}/perfmine/${ID}@sha256:[0-9a-f]{64}$`));
    const dockerfile = readFileSync(join(harborDir, ID, 'environment', 'Dockerfile'), 'utf8');
    const bases = dockerfileBases(dockerfile);
    expect(bases).toHaveLength(1);
    expect(bases[0]).toMatch(new RegExp(`^${REGISTRY.replace(/\./g, '\\.')}/perfmine/base@sha256:[0-9a-f]{64}$`));
    expect(dockerfile).not.toContain(BASE_IMAGE);
    // self-contained: the locked wheels in the folder, installed with no index
    for (const id of IDS) expect(readdirSync(join(harborDir, id, 'environment', 'wheels')).length, id).toBeGreaterThan(0);
    expect(dockerfile).toContain('--no-index');
    for (const ref of [image, bases[0]!]) {
      const r = parseImageRef(ref)!;
      expect(await api.missing(r.registry!, r.repository, r.digest!)).toEqual([]);
    }
    // the Hugging Face folder: the rows and the task folder name the same images
    const folder = join(hfDir, 'tasks', '2025-04', ID);
    const meta = JSON.parse(readFileSync(join(folder, 'metadata.json'), 'utf8')) as {
      images: { environment: string; bases: Record<string, string> };
    };
    expect(meta.images).toEqual({ environment: image, bases: { [BASE_IMAGE]: bases[0] } });
    expect(readFileSync(join(folder, 'Dockerfile'), 'utf8')).toContain(`FROM ${bases[0]}\n`);
    const readme = readFileSync(join(hfDir, 'README.md'), 'utf8');
    expect(readme).toContain(`| ${ID} | \`${image}\` | \`${bases[0]}\` |`);
    const rows = readdirSync(join(hfDir, 'data'));
    expect(rows.length).toBeGreaterThan(0);
    expect(readFileSync(join(harborDir, 'README.md'), 'utf8')).toMatch(/2026-03-24[\s\S]*docker_image[\s\S]*tmux/);
  }, 120_000);

  it('the other engine starts empty, and builds environment/ as Harbor does (docker-compose build, no build arguments)', async () => {
    const ids = await sh(['images', '-q'], undefined, other);
    expect(ids.code).toBe(0);
    for (const id of IDS) {
      const compose = join(dir, `${id}.compose.yaml`);
      writeFileSync(
        compose,
        [
          'services:',
          '  main:',
          '    build:',
          `      context: ${join(harborDir, id, 'environment')}`,
          `    image: hb__${id}`,
          '    command: ["sh", "-c", "sleep infinity"]',
          '',
        ].join('\n'),
      );
      const built = await execFileP('docker-compose', ['-f', compose, '-p', `p${label.toLowerCase().replace(/[^a-z0-9]/g, '')}`, 'build'], {
        env: { ...process.env, DOCKER_HOST: other },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 1_800_000,
      }).then(
        (r) => ({ code: 0, out: r.stdout + r.stderr }),
        (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }),
      );
      expect(built.code, built.out.slice(-3000)).toBe(0);
    }
  }, 1_800_000);

  it('from docker_image alone: pulled there; as the agent with no network, tmux starts and perfmine-bench lists the workloads', async () => {
    for (const id of IDS) {
      const image = taskToml(id).environment.docker_image!;
      expect((await sh(['pull', image], undefined, other)).code).toBe(0);
      const inside = await sh(
        [
          'run',
          '--rm',
          '--network',
          'none',
          '-u',
          taskToml(id).agent.user,
          '-w',
          '/repo',
          image,
          'bash',
          '-c',
          'tmux new-session -d -s work "sleep 60" && tmux has-session -t work && echo TMUX-OK && perfmine-bench list',
        ],
        undefined,
        other,
      );
      expect(inside.code, inside.out).toBe(0);
      expect(inside.out).toContain('TMUX-OK');
      expect(inside.out).toContain('bench_core.time_fib');
    }
  }, 600_000);

  it("the oracle's trial there, from docker_image alone: the expert's reward", async () => {
    for (const id of IDS) {
      const t: Trial = await harborTrial({
        task: join(harborDir, id),
        image: taskToml(id).environment.docker_image!,
        logs: join(dir, 'trials', id),
        container: `${label}-${id}`,
        label,
        agent: 'oracle',
        // the task's own protocol and reward rounds: #108's 1.4x needs them to be told apart from none
        host: other,
      });
      console.log(shown(`${id} oracle (other engine)`, t));
      expect(t.verifier.code, t.verifier.out).toBe(0);
      expect(t.reward).toMatchObject({ correct: 1, expert_measured: 1, verifier_error: 0, hack: 0 });
      // paid as the expert: near 1 (the 5% accuracy on a quiet machine is issue 35's; beside another
      // measuring suite #108, whose expert is only 1.3x, read 0.915 once)
      expect(
        Math.abs(t.reward!['reward']! - 1),
        `${id}: ${JSON.stringify(t.reward)} ${JSON.stringify(t.details?.workloads ?? null)}`,
      ).toBeLessThan(0.15);
    }
  }, 1_800_000);

  it('perfmine replay of each published folder, against the other engine: replicates', async () => {
    const fresh = openStore(join(dir, 'replay.db'));
    try {
      for (const id of IDS) {
        const copy = join(dir, 'copies', id);
        cpSync(join(hfDir, 'tasks', '2025-04', id), copy, { recursive: true });
        const replay = await replayOnOther(copy, fresh, 'a second engine');
        const r = replay.records[0]!;
        console.log(`${id}: replay ${r.verdict} ${JSON.stringify(r.durations)}`);
        expect(r.verdict, JSON.stringify(r, null, 1).slice(0, 3000)).toBe('replicates');
      }
    } finally {
      fresh.close();
    }
  }, 3_600_000);

  it('a registry that lost the base image, then a layer of it: replay names what is lost and records nothing; publish pushes it again, whole', async () => {
    const base = dockerfileBases(readFileSync(join(hfDir, 'tasks', '2025-04', ID, 'Dockerfile'), 'utf8'))[0]!;
    const ref = parseImageRef(base)!;
    const deleted = await fetch(`${registryBaseUrl(ref.registry!)}/${ref.repository}/manifests/${ref.digest}`, { method: 'DELETE' });
    expect(deleted.status).toBe(202);
    expect(await api.missing(ref.registry!, ref.repository, ref.digest!)).toEqual([`manifest ${ref.digest}`]);
    // the other engine no longer has it either: a machine that never pulled it
    await script(['scripts/second-engine.sh', 'start']);
    const copy = join(dir, 'copies-lost', ID);
    cpSync(join(hfDir, 'tasks', '2025-04', ID), copy, { recursive: true });
    const fresh = openStore(join(dir, 'replay-lost.db'));
    try {
      const failed = replayOnOther(copy, fresh, null);
      await expect(failed).rejects.toThrow(
        new RegExp(
          `${ID}: its Dockerfile starts from ${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, which cannot be pulled: the registry lacks manifest ${ref.digest}`,
        ),
      );
      expect(readFolderReplays(copy).records).toEqual([]);
      expect(new ReplayStore(fresh).list()).toEqual([]);
    } finally {
      fresh.close();
    }
    const healed = await runPublish({ to: harborDir, format: 'harbor', registry: REGISTRY }, globals, { docker });
    expect(healed.images!.pushed).toContain(base);
    expect(await api.missing(ref.registry!, ref.repository, ref.digest!)).toEqual([]);
    expect(healed.written).toEqual([]);

    // a layer lost: the manifest answers, the blob does not
    const manifest = (await (
      await fetch(`${registryBaseUrl(ref.registry!)}/${ref.repository}/manifests/${ref.digest}`, {
        headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' },
      })
    ).json()) as { layers: { digest: string }[] };
    const layer = manifest.layers[0]!.digest;
    expect((await fetch(`${registryBaseUrl(ref.registry!)}/${ref.repository}/blobs/${layer}`, { method: 'DELETE' })).status).toBe(202);
    expect(await api.missing(ref.registry!, ref.repository, ref.digest!)).toEqual([`layer ${layer}`]);
    await script(['scripts/second-engine.sh', 'start']);
    const again = openStore(join(dir, 'replay-lost-layer.db'));
    try {
      const copyLayer = join(dir, 'copies-lost-layer', ID);
      cpSync(join(hfDir, 'tasks', '2025-04', ID), copyLayer, { recursive: true });
      await expect(replayOnOther(copyLayer, again, null)).rejects.toThrow(`the registry lacks layer ${layer}`);
      expect(readFolderReplays(copyLayer).records).toEqual([]);
    } finally {
      again.close();
    }
    const relayered = await runPublish({ to: harborDir, format: 'harbor', registry: REGISTRY }, globals, { docker });
    expect(relayered.images!.pushed).toContain(base);
    expect(await api.missing(ref.registry!, ref.repository, ref.digest!)).toEqual([]);
  }, 1_800_000);

  it('a registry that cannot be reached: publish names the image it could not push, and leaves the folder as it was', async () => {
    const before = snapshotTree(harborDir);
    await expect(runPublish({ to: harborDir, format: 'harbor', registry: '127.0.0.1:9' }, globals, { docker })).rejects.toThrow(
      /perfmine\/base:bookworm/,
    );
    expect(snapshotTree(harborDir)).toEqual(before);
    expect(existsSync(join(harborDir, ID, 'task.toml'))).toBe(true);
  }, 300_000);
});
