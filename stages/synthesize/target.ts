import type { Logger } from '../../pipeline/logging.js';
import type { DockerService } from '../../pipeline/services/docker.js';
import type { Environments } from '../../pipeline/services/environments/environment.js';
import { parseCloneSource } from '../../pipeline/services/environments/environment.js';
import { ImageGitTree, LocalGitTree, type GitTree } from './git-tree.js';
import { choosePython, type AsvPythonsRule } from './python-version.js';
import { extractFacts, FACT_FILES } from './repo-facts.js';
import type { CommitTarget, PreparedTarget } from './build-port.js';
import { parseAsvConfig } from '../../pipeline/concepts/asv-config.js';
import { benchmarkDirOf } from '../../pipeline/services/environments/verification.js';

export interface TargetRequest {
  readonly repo: string;
  readonly sha: string;
  readonly cloneSource: string;
  readonly asvConfigPath: string | null;
  readonly baseImage: string;
  readonly wheelhouse: string | null;
  readonly pythonVersions: readonly string[];
  /** How the asv config's `pythons` bounds the choice (absent: `require`). */
  readonly asvPythons?: AsvPythonsRule | undefined;
}

/**
 * Everything known about a commit before a script is tried: the toolchain, repository and
 * source images, the commit date, the repository facts, the asv configuration and the Python choice.
 * Or why no script can be tried: the commit has no asv configuration, or no Python it allows.
 */
export async function prepareTarget(
  envs: Environments,
  docker: DockerService,
  request: TargetRequest,
  log: Logger,
  signal?: AbortSignal,
): Promise<PreparedTarget> {
  const clone = parseCloneSource(request.cloneSource);
  const toolchain = await envs.ensureToolchain(request.baseImage, request.wheelhouse, signal);
  const repoImage = await envs.ensureRepoImage(request.repo, clone, toolchain.image, signal);
  const sourceImage = await envs.ensureSourceImage(
    request.repo,
    request.sha,
    toolchain.image,
    () => Promise.resolve(repoImage),
    clone,
    signal,
  );
  const tree: GitTree =
    clone.kind === 'git'
      ? new LocalGitTree(clone.path)
      : new ImageGitTree(docker, repoImage, { limits: envs.settings.limits, timeoutMs: envs.settings.timeoutsMs.tool, network: 'bridge' });

  const commitDate = await tree.commitDate(request.sha);
  const paths = await tree.listFiles(request.sha);
  const texts = new Map<string, string>();
  for (const f of FACT_FILES) {
    if (!paths.includes(f)) continue;
    const text = await tree.readFile(request.sha, f);
    if (text !== null) texts.set(f, text);
  }
  const facts = extractFacts(paths, texts);
  const asvConfigPath = request.asvConfigPath && paths.includes(request.asvConfigPath) ? request.asvConfigPath : facts.asvConfigPath;
  if (!asvConfigPath) return { kind: 'no-asv-config' };
  const asvConfigText = await tree.readFile(request.sha, asvConfigPath);
  const benchmarkDir = benchmarkDirOf(asvConfigPath, asvConfigText);
  const asvConfig = asvConfigText === null ? null : parseAsvConfig(asvConfigText);
  const python = choosePython(
    facts.python,
    request.pythonVersions,
    asvConfig?.ok ? (asvConfig.config.pythons ?? null) : null,
    request.asvPythons ?? 'require',
  );
  if (python.version === null) return { kind: 'python-unavailable', reason: python.reason };
  log.info(
    { commitDate, importName: facts.importName, backend: facts.buildBackend, python: python.version, pythonReason: python.reason },
    'synthesizing',
  );
  const target: CommitTarget = {
    repo: request.repo,
    sha: request.sha,
    commitDate,
    clone,
    baseImage: request.baseImage,
    toolchainImage: toolchain.image,
    repoImage,
    sourceImage,
    facts,
    asvConfigPath,
    benchmarkDir,
    python,
    tree,
  };
  return { kind: 'ready', target };
}
