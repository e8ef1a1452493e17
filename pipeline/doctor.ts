import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import PQueue from 'p-queue';
import { latestSchemaVersion, migrations, openStore } from '../cache/store.js';
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
    if (image.status === 'ok') checks.push(await checkAsvInImage(deps));
    else checks.push({ name: 'asv in the base image', status: 'skipped', detail: 'no base image', required: true });
  } else {
    checks.push({ name: 'base image', status: 'skipped', detail: 'no Docker engine', required: true });
    checks.push({ name: 'asv in the base image', status: 'skipped', detail: 'no Docker engine', required: true });
  }
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
    return { name: 'Docker engine', status: 'missing', detail: (error as Error).message, fix: 'run scripts/setup-docker.sh as root (installs docker.io, starts dockerd), or set DOCKER_HOST', required: true };
  }
}

async function checkBaseImage({ docker, config }: DoctorDeps): Promise<Check> {
  const tag = config.docker.baseImage;
  if (await docker.imageExists(tag)) return ok('base image', tag);
  return {
    name: 'base image',
    status: 'missing',
    detail: `${tag} is not in the engine`,
    fix: tag === 'perfmine/base:bookworm' ? 'run scripts/build-base-image.sh (debootstrap + docker import; no Docker Hub needed)' : `pull or build ${tag}, or pass --base-image`,
    required: true,
  };
}

async function checkAsvInImage({ docker, config, timeoutMs }: DoctorDeps): Promise<Check> {
  const tag = config.docker.baseImage;
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
    detail: `${tag} has no asv: environments cannot be verified and nothing can be measured`,
    fix: 'on a host with PyPI, build the pip base image (scripts/Dockerfile.base) and pass --base-image; air-gapped, install asv from a wheelhouse (see README: synthesize.asvWheelhouse)',
    required: true,
  };
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
    checks.push({ name: 'LLM key', status: 'missing', detail: 'OPENAI_API_KEY not set', fix: 'export OPENAI_API_KEY, point OPENAI_BASE_URL at a local server, or use --llm none (rules only)', required: true });
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
      return { name: 'LLM endpoint', status: 'warn', detail: `${where} answers, but does not list ${absent.join(', ')} (it lists ${models.slice(0, 8).join(', ') || 'no models'})`, fix: 'set PERFMINE_MODEL / PERFMINE_FALLBACK_MODEL to models the server serves', required: true };
    }
    return ok('LLM endpoint', `${where} serves ${wanted.join(' and ')}`);
  } catch (error) {
    return { name: 'LLM endpoint', status: 'missing', detail: `${where}: ${(error as Error).message}`, fix: 'check OPENAI_BASE_URL and the server, or use --llm none', required: true };
  } finally {
    db.close();
  }
}

export function checkDatabase(path: string): Check {
  if (path !== ':memory:' && !existsSync(path)) return ok('database schema', `no database at ${path} yet; the first run creates it (schema ${latestSchemaVersion()})`, false);
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const has = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    const applied = has ? (db.prepare('SELECT id FROM schema_migrations ORDER BY id').all() as { id: number }[]).map((r) => r.id) : [];
    const known = new Set(migrations().map((m) => m.id));
    const newer = applied.filter((id) => !known.has(id));
    if (newer.length > 0) return { name: 'database schema', status: 'missing', detail: `${path} was written by a newer perfmine (schema ${Math.max(...newer)})`, fix: 'upgrade perfmine, or use another --db', required: true };
    const pending = migrations().filter((m) => !applied.includes(m.id)).length;
    return ok('database schema', `${path}: schema ${applied.at(-1) ?? 0}${pending ? `, ${pending} migration(s) will be applied by the next run` : ', up to date'}`, false);
  } catch (error) {
    return { name: 'database schema', status: 'missing', detail: `${path}: ${(error as Error).message}`, fix: 'check the file, or use another --db', required: true };
  } finally {
    db?.close();
  }
}
