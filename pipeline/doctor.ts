import { existsSync, statSync } from 'node:fs';
import PQueue from 'p-queue';
import { checkDatabasePath } from '../cache/database-path.js';
import { latestSchemaVersion, openStore, schemaStatus, type Db } from '../cache/store.js';
import { ConfigError } from './errors.js';
import type { Config } from './config/schema.js';
import type { Credentials } from './credentials.js';
import type { Logger } from './logging.js';
import { Metrics } from './metrics.js';
import { parseSource } from './scope.js';
import type { DockerService } from './services/docker.js';
import { OpenAiLlmService } from './services/llm.js';
import { isLocalBaseUrl, PLACEHOLDER_API_KEY } from './services/llm-key.js';

export type CheckStatus = 'ok' | 'missing' | 'warn' | 'skipped';

export interface Check {
  readonly name: string;
  readonly status: CheckStatus;
  readonly detail: string;
  /** What to do when it is not ok. */
  readonly fix?: string;
  /** Whether the configured pipeline cannot run without it. */
  readonly required: boolean;
}

export interface DoctorDeps {
  readonly config: Config;
  readonly credentials: Credentials;
  readonly docker: DockerService;
  readonly log: Logger;
  /** Per-check time limit. */
  readonly timeoutMs?: number;
}

const ok = (name: string, detail: string, required = true): Check => ({ name, status: 'ok', detail, required });

/** Checks, in order, everything a monthly run needs; each failing check says how to fix it. */
export async function runDoctor(deps: DoctorDeps): Promise<Check[]> {
  const checks: Check[] = [];
  const engine = await checkDocker(deps);
  checks.push(engine);
  if (engine.status === 'ok') {
    const image = await checkBaseImage(deps);
    checks.push(image);
    if (image.status === 'ok') checks.push(await checkEngineInImage(deps));
    else checks.push({ name: engineCheckName(deps.config), status: 'skipped', detail: 'no base image', required: true });
  } else {
    checks.push({ name: 'base image', status: 'skipped', detail: 'no Docker engine', required: true });
    checks.push({ name: engineCheckName(deps.config), status: 'skipped', detail: 'no Docker engine', required: true });
  }
  for (const [repo, section] of Object.entries(deps.config.repositories)) {
    if (!section.baseImage) continue;
    checks.push(
      engine.status === 'ok'
        ? await checkRepositoryImage(deps, repo, section.baseImage, section.pythonVersions ?? [])
        : { name: repositoryImageCheckName(repo), status: 'skipped', detail: 'no Docker engine', required: true },
    );
  }
  checks.push(await checkPackageIndex(deps));
  checks.push(...checkCredentials(deps.config, deps.credentials));
  checks.push(await checkLlm(deps));
  checks.push(checkDatabase(deps.config.db));
  return checks;
}

async function checkDocker({ docker }: DoctorDeps): Promise<Check> {
  try {
    const v = await docker.ping();
    return ok('Docker engine', `Docker ${v.version} (API ${v.apiVersion})${process.env.DOCKER_HOST ? ` at DOCKER_HOST` : ''}`);
  } catch (error) {
    return {
      name: 'Docker engine',
      status: 'missing',
      detail: (error as Error).message,
      fix: 'run scripts/setup-docker.sh as root (installs docker.io, starts dockerd), or set DOCKER_HOST',
      required: true,
    };
  }
}

async function checkBaseImage({ docker, config }: DoctorDeps): Promise<Check> {
  const tag = config.docker.baseImage;
  if (await docker.imageExists(tag)) return ok('base image', tag);
  return {
    name: 'base image',
    status: 'missing',
    detail: `${tag} is not in the engine`,
    fix:
      tag === 'perfmine/base:bookworm'
        ? 'run scripts/build-base-image.sh (debootstrap + docker import; no Docker Hub needed)'
        : `pull or build ${tag}, or pass --base-image`,
    required: true,
  };
}

function repositoryImageCheckName(repo: string): string {
  return `base image of ${repo}`;
}

/** A repository's own base image (`repositories."owner/name".baseImage`): there, with the Pythons it is said to offer. */
async function checkRepositoryImage(
  { docker, timeoutMs }: DoctorDeps,
  repo: string,
  tag: string,
  pythons: readonly string[],
): Promise<Check> {
  const name = repositoryImageCheckName(repo);
  const setting = `repositories."${repo}"`;
  if (!(await docker.imageExists(tag)))
    return {
      name,
      status: 'missing',
      detail: `${tag} (${setting}.baseImage) is not in the engine: none of ${repo}'s commits can be built`,
      fix: `build it (a Debian base: PERFMINE_DEBIAN_SUITE=trixie scripts/build-base-image.sh ${tag}), pull it, or remove ${setting}.baseImage`,
      required: true,
    };
  const wanted = pythons.length > 0 ? pythons.map((v) => `python${v}`) : ['python3'];
  const result = await docker.run({
    image: tag,
    cmd: ['sh', '-c', 'for p in "$@"; do command -v "$p" >/dev/null || echo "$p"; done', 'sh', ...wanted],
    timeoutMs: timeoutMs ?? 60_000,
    limits: { cpus: 1, memoryMb: 512, pidsLimit: 64 },
  });
  const absent = result.stdout.split('\n').filter(Boolean);
  if (result.exitCode === 0 && absent.length === 0) return ok(name, `${tag} with ${wanted.join(', ')}`);
  return {
    name,
    status: 'missing',
    detail:
      result.exitCode === 0
        ? `${tag} has no ${absent.join(', ')}${pythons.length > 0 ? ` (${setting}.pythonVersions)` : ''}`
        : `${tag} could not be started: ${result.stderr.trim().split('\n').at(-1) ?? `exit ${result.exitCode}`}`,
    fix: `set ${setting}.pythonVersions to the X.Y Pythons the image has, or use an image with them`,
    required: true,
  };
}

/** What the measurement engine needs in the base image: Python for perfmine's harness, asv for the asv engine. */
function engineCheckName(config: Config): string {
  return config.validate.engine === 'asv' ? 'asv in the base image' : 'Python for the harness in the base image';
}

async function checkEngineInImage(deps: DoctorDeps): Promise<Check> {
  return deps.config.validate.engine === 'asv' ? checkAsvInImage(deps) : checkPythonInImage(deps);
}

/** The harness (validate.engine perfmine) needs only the image's Python, 3.8 or newer. */
async function checkPythonInImage({ docker, config, timeoutMs }: DoctorDeps): Promise<Check> {
  const tag = config.docker.baseImage;
  const name = engineCheckName(config);
  const result = await docker.run({
    image: tag,
    cmd: ['sh', '-c', 'python3 -c "import sys; v = sys.version_info; print(\'%d.%d.%d\' % v[:3]); sys.exit(0 if v >= (3, 8) else 3)"'],
    timeoutMs: timeoutMs ?? 60_000,
    limits: { cpus: 1, memoryMb: 512, pidsLimit: 64 },
  });
  const version = result.stdout.trim();
  if (result.exitCode === 0)
    return ok(name, `python ${version}: perfmine's harness measures with it (validate.engine perfmine; no asv needed)`);
  return {
    name,
    status: 'missing',
    detail:
      result.exitCode === 3
        ? `${tag} has python ${version}; the harness needs 3.8 or newer`
        : `${tag} has no python3: nothing can be measured`,
    fix: 'use a base image with Python 3.8 or newer: scripts/build-base-image.sh builds perfmine/base:bookworm (Python 3.11) from Debian packages',
    required: true,
  };
}

async function checkAsvInImage({ docker, config, timeoutMs }: DoctorDeps): Promise<Check> {
  const tag = config.docker.baseImage;
  if (config.synthesize.asv.wheelhouse) {
    return ok(
      'asv in the base image',
      `asv is installed from synthesize.asv.wheelhouse (${config.synthesize.asv.wheelhouse}) into the toolchain image`,
    );
  }
  const result = await docker.run({
    image: tag,
    cmd: ['sh', '-c', 'command -v asv >/dev/null && asv --version'],
    timeoutMs: timeoutMs ?? 60_000,
    limits: { cpus: 1, memoryMb: 512, pidsLimit: 64 },
  });
  if (result.exitCode === 0) return ok('asv in the base image', result.stdout.trim() || 'asv present');
  return {
    name: 'asv in the base image',
    status: 'missing',
    detail: `${tag} has no asv, which validate.engine asv needs`,
    fix: `set validate.engine to perfmine (only Python is needed); or, on a host with PyPI: docker build -f scripts/base-pypi.Dockerfile -t perfmine/base:bookworm-asv scripts/, then pass --base-image perfmine/base:bookworm-asv (or set docker.baseImage); air-gapped: keep ${tag} and set synthesize.asv.wheelhouse in perfmine.config.json to a directory of asv wheels (pip download asv -d DIR on a host with PyPI)`,
    required: true,
  };
}

/**
 * The index the time machine fronts (synthesize.buildNetwork `index`): an HTTP index answers its
 * project list, a `dir:` upstream is a directory. Not required: a repository whose builds install
 * nothing from an index builds without it, and every failure of it is named in a build's log.
 */
async function checkPackageIndex({ config, timeoutMs }: DoctorDeps): Promise<Check> {
  const name = 'package index';
  if (config.synthesize.buildNetwork !== 'index')
    return { name, status: 'skipped', detail: `synthesize.buildNetwork is ${config.synthesize.buildNetwork}`, required: false };
  const upstream = config.synthesize.index.upstream;
  const fix =
    'set synthesize.index.upstream (or PERFMINE_INDEX_UPSTREAM) to an index or mirror this machine reaches, or to dir:PATH (a directory of wheels and sdists)';
  if (upstream.startsWith('dir:')) {
    const path = upstream.slice(4);
    return existsSync(path) && statSync(path).isDirectory()
      ? ok(name, `the time machine serves the directory ${path}`, false)
      : { name, status: 'warn', detail: `${upstream}: no such directory`, fix, required: false };
  }
  try {
    const response = await fetch(upstream, {
      headers: { accept: 'application/vnd.pypi.simple.v1+json, text/html;q=0.1' },
      signal: AbortSignal.timeout(timeoutMs ?? 10_000),
    });
    await response.body?.cancel();
    if (response.ok)
      return ok(
        name,
        `${upstream} answers (${response.headers.get('content-type') ?? 'no content type'}); builds install from it as of each commit's date`,
        false,
      );
    return { name, status: 'warn', detail: `${upstream} answers ${response.status}`, fix, required: false };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      name,
      status: 'warn',
      detail: `${upstream} does not answer (${cause?.code ?? cause?.message ?? (error as Error).message}): builds that install dependencies will fail`,
      fix,
      required: false,
    };
  }
}

export function checkCredentials(config: Config, credentials: Credentials): Check[] {
  const checks: Check[] = [];
  const source = parseSource(config.source);
  const tokens = credentials.githubTokens.length;
  checks.push(
    tokens > 0
      ? ok('GitHub token', `${tokens} token${tokens > 1 ? 's' : ''} (GITHUB_TOKEN${tokens > 1 ? 'S' : ''})`, source.kind === 'github')
      : {
          name: 'GitHub token',
          status: source.kind === 'github' ? 'missing' : 'skipped',
          detail: 'GITHUB_TOKEN / GITHUB_TOKENS not set',
          fix: 'export GITHUB_TOKEN (or GITHUB_TOKENS=a,b for rotation); --source git:PATH works without it',
          required: source.kind === 'github',
        },
  );
  if (config.llm.mode === 'none') {
    checks.push({ name: 'LLM key', status: 'skipped', detail: '--llm none: rules only', required: false });
  } else if (credentials.openaiApiKey) {
    checks.push(ok('LLM key', 'OPENAI_API_KEY is set'));
  } else if (config.llm.baseUrl && isLocalBaseUrl(config.llm.baseUrl)) {
    checks.push(ok('LLM key', 'none needed for the local server at OPENAI_BASE_URL'));
  } else {
    checks.push({
      name: 'LLM key',
      status: 'missing',
      detail: 'OPENAI_API_KEY not set',
      fix: 'export OPENAI_API_KEY, point OPENAI_BASE_URL at a local server, or use --llm none (rules only)',
      required: true,
    });
  }
  return checks;
}

async function checkLlm({ config, credentials, log, timeoutMs }: DoctorDeps): Promise<Check> {
  if (config.llm.mode === 'none') return { name: 'LLM endpoint', status: 'skipped', detail: '--llm none', required: false };
  const local = config.llm.baseUrl !== undefined && isLocalBaseUrl(config.llm.baseUrl);
  const apiKey = credentials.openaiApiKey ?? (local ? PLACEHOLDER_API_KEY : undefined);
  const where = config.llm.baseUrl ?? 'https://api.openai.com/v1';
  if (!apiKey) return { name: 'LLM endpoint', status: 'skipped', detail: `no key for ${where}`, required: true };
  // A throwaway store: listing models is never cached or accounted.
  const db = openStore(':memory:');
  try {
    const service = new OpenAiLlmService({
      config: { ...config.llm, timeoutMs: Math.min(config.llm.timeoutMs, timeoutMs ?? 10_000), maxRetries: 0 },
      apiKey,
      db,
      log,
      metrics: new Metrics(),
      queue: new PQueue({ concurrency: 1 }),
    });
    const models = await service.listModels(AbortSignal.timeout(timeoutMs ?? 10_000));
    const wanted = [config.llm.model, ...(config.llm.fallbackModel ? [config.llm.fallbackModel] : [])];
    const absent = wanted.filter((m) => !models.includes(m));
    if (absent.length > 0) {
      return {
        name: 'LLM endpoint',
        status: 'warn',
        detail: `${where} answers, but does not list ${absent.join(', ')} (it lists ${models.slice(0, 8).join(', ') || 'no models'})`,
        fix: 'set PERFMINE_MODEL / PERFMINE_FALLBACK_MODEL to models the server serves',
        required: true,
      };
    }
    return ok('LLM endpoint', `${where} serves ${wanted.join(' and ')}`);
  } catch (error) {
    return {
      name: 'LLM endpoint',
      status: 'missing',
      detail: `${where}: ${(error as Error).message}`,
      fix: 'check OPENAI_BASE_URL and the server, or use --llm none',
      required: true,
    };
  } finally {
    db.close();
  }
}

/** What a run needs of the database: a path it can create or write, holding perfmine's schema (or nothing yet). */
export function checkDatabase(path: string): Check {
  let db: Db | undefined;
  try {
    const state = checkDatabasePath(path, 'write');
    if (state === 'absent')
      return ok('database schema', `no database at ${path} yet; the first run creates it (schema ${latestSchemaVersion()})`, false);
    if (state === 'empty')
      return ok('database schema', `${path} is an empty file; the first run creates the schema (${latestSchemaVersion()}) in it`, false);
    db = openStore(path, { readonly: true });
    const schema = schemaStatus(db);
    const pending = schema.pending.length;
    return ok(
      'database schema',
      `${path}: schema ${schema.applied.at(-1) ?? 0}${pending ? `, ${pending} migration(s) will be applied by the next run` : ', up to date'}`,
      false,
    );
  } catch (error) {
    if (error instanceof ConfigError)
      return {
        name: 'database schema',
        status: 'missing',
        detail: error.issues.join('; ').replace(/^db: /, ''),
        fix: error.fix ?? 'check the file, or use another --db',
        required: true,
      };
    return {
      name: 'database schema',
      status: 'missing',
      detail: `${path}: ${(error as Error).message}`,
      fix: 'check the file, or use another --db',
      required: true,
    };
  } finally {
    db?.close();
  }
}
