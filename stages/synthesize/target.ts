import type { Logger } from '../../pipeline/logging.js';
import type { DockerService } from '../../pipeline/services/docker.js';
import type { Environments } from '../../pipeline/services/environments/environment.js';
import { parseCloneSource } from '../../pipeline/services/environments/environment.js';
import { ImageGitTree, LocalGitTree, type GitTree } from './git-tree.js';
import { choosePython } from './python-version.js';
import { extractFacts, FACT_FILES } from './repo-facts.js';
import type { CommitTarget } from './build-port.js';
import { benchmarkDirOf } from '../../pipeline/services/environments/verification.js';

export interface TargetRequest {
  readonly repo: string;
  readonly sha: string;
  readonly cloneSource: string;
  readonly asvConfigPath: string | null;
  readonly baseImage: string;
  readonly wheelhouse: string | null;
  readonly pythonVersions: readonly string[];
}

/**
 * Everything known about a commit before a script is tried: the toolchain and repository
 * images, the commit date, the repository facts, the asv configuration and the Python choice.
 * Null when the commit has no asv configuration.
 */
export async function prepareTarget(
  envs: Environments,
  docker: DockerService,
  request: TargetRequest,
  log: Logger,
  signal?: AbortSignal,
): Promise<CommitTarget | null> {
  const clone = parseCloneSource(request.cloneSource);
  const toolchain = await envs.ensureToolchain(request.baseImage, request.wheelhouse, signal);
  const repoImage = await envs.ensureRepoImage(request.repo, clone, toolchain.image, signal);
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
  if (!asvConfigPath) return null;
  const benchmarkDir = benchmarkDirOf(asvConfigPath, await tree.readFile(request.sha, asvConfigPath));
  const python = choosePython(facts.python, request.pythonVersions);
  log.info(
    { commitDate, importName: facts.importName, backend: facts.buildBackend, python: python.version, pythonReason: python.reason },
    'synthesizing',
  );
  return {
    repo: request.repo,
    sha: request.sha,
    commitDate,
    clone,
    baseImage: request.baseImage,
    toolchainImage: toolchain.image,
    repoImage,
    facts,
    asvConfigPath,
    benchmarkDir,
    python,
    tree,
  };
}
