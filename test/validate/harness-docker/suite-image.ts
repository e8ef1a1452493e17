import type { DockerService } from '../../../pipeline/services/docker.js';
import type { HarnessWorkers, Side } from '../../../stages/validate/harness/interleave.js';
import { DockerMeasurementRunner } from '../../../stages/validate/docker-runner.js';
import type { CandidateEnvironment } from '../../../stages/validate/runner-port.js';
import type { SynthesizeOutput } from '../../../pipeline/concepts/records/synthesize-output.js';
import type { Logger } from '../../../pipeline/logging.js';

/**
 * Images holding a small suite at /repo (its package importable through PYTHONPATH), built from
 * perfmine/base:bookworm with nothing but the files given: what synthesize would make of a pure
 * Python repository, without a build script. The harness workers of validate's Docker runner
 * are opened on them exactly as validate opens them on verified environments.
 */
export async function suiteImage(
  docker: DockerService,
  tag: string,
  files: Readonly<Record<string, string>>,
  options: { readonly from?: string; readonly git?: boolean } = {},
): Promise<string> {
  // asv (the stand-in too) reads the checkout's HEAD: a one-commit repository when asked
  const commit = options.git ? 'RUN cd /repo && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm suite\n' : '';
  const built = await docker.buildImage({
    tag,
    context: [
      { name: 'Dockerfile', content: `FROM ${options.from ?? 'perfmine/base:bookworm'}\nCOPY repo /repo\nENV PYTHONPATH=/repo\n${commit}` },
      ...Object.entries(files).map(([name, content]) => ({ name: `repo/${name}`, content })),
    ],
    timeoutMs: 120_000,
  });
  if (!built.ok) throw new Error(`building ${tag} failed: ${built.error}\n${built.log}`);
  return tag;
}

export function environmentOf(key: string, baseImage: string): CandidateEnvironment {
  return {
    key,
    number: 1,
    baseImage,
    synthesized: {} as SynthesizeOutput,
    repoDir: '/repo',
    python: 'python3',
    env: { OMP_NUM_THREADS: '1' },
    network: false,
  };
}

const LIMITS = { cpus: 1, memoryMb: 1024, pidsLimit: 256 };

/** Harness workers of the real Docker runner: base and calibration on `base`, the expert on `expert`. */
export function dockerWorkers(
  docker: DockerService,
  log: Logger,
  images: { readonly base: string; readonly expert: string },
  options: { readonly cpusets?: Readonly<Record<Side, string | null>>; readonly startTimeoutMs?: number } = {},
): { workers: HarnessWorkers; runner: DockerMeasurementRunner } {
  const runner = new DockerMeasurementRunner({
    docker,
    limits: LIMITS,
    build: {
      limits: LIMITS,
      timeoutsMs: { repoImage: 1, build: 1, import: 1, asv: 1, pytest: 1, tamper: 1, tool: 1 },
      tailChars: 8000,
      buildNetwork: 'none',
      index: null,
      store: null,
      asvDiscover: 'harness',
    },
    wheelhouse: null,
    log,
  });
  const env = environmentOf('fixture/suite#1', images.base);
  const workers: HarnessWorkers = {
    open: (side, signal) =>
      runner.openHarnessWorker(
        env,
        side === 'expert' ? images.expert : images.base,
        {
          side,
          configPath: 'asv.conf.json',
          bench: null,
          cpuset: options.cpusets?.[side] ?? null,
          hashSeed: '0',
          startTimeoutMs: options.startTimeoutMs ?? 120_000,
          maxLifetimeMs: 1_800_000,
        },
        signal,
      ),
  };
  return { workers, runner };
}
