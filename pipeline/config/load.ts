import { existsSync, readFileSync } from 'node:fs';
import JSON5 from 'json5';
import type { z } from 'zod';
import { ConfigError } from '../errors.js';
import { configSchema, type Config } from './schema.js';

export const DEFAULT_CONFIG_FILE = 'perfmine.config.json';

type Plain = { [key: string]: unknown };

/** Environment variables that set configuration (credentials are not configuration: see credentials.ts). */
export const ENV_MAP: ReadonlyArray<{ readonly name: string; readonly path: readonly string[]; readonly number?: boolean }> = [
  { name: 'PERFMINE_DB', path: ['db'] },
  { name: 'PERFMINE_OUT', path: ['out'] },
  { name: 'PERFMINE_LOG_LEVEL', path: ['logLevel'] },
  { name: 'PERFMINE_LOG_FORMAT', path: ['logFormat'] },
  { name: 'PERFMINE_SOURCE', path: ['source'] },
  { name: 'PERFMINE_BASE_IMAGE', path: ['docker', 'baseImage'] },
  { name: 'PERFMINE_INDEX_UPSTREAM', path: ['synthesize', 'index', 'upstream'] },
  { name: 'PERFMINE_DOCKER_CONCURRENCY', path: ['docker', 'concurrency'], number: true },
  { name: 'PERFMINE_LLM', path: ['llm', 'mode'] },
  { name: 'OPENAI_BASE_URL', path: ['llm', 'baseUrl'] },
  { name: 'PERFMINE_MODEL', path: ['llm', 'model'] },
  { name: 'PERFMINE_FALLBACK_MODEL', path: ['llm', 'fallbackModel'] },
  { name: 'PERFMINE_LLM_CONCURRENCY', path: ['llm', 'concurrency'], number: true },
  { name: 'GITHUB_API_URL', path: ['github', 'baseUrl'] },
  { name: 'PERFMINE_GITHUB_CONCURRENCY', path: ['github', 'concurrency'], number: true },
];

export interface LoadOptions {
  /** `--config PATH`; when absent, `./perfmine.config.json` is read if it exists. */
  readonly configPath?: string | undefined;
  readonly env?: NodeJS.ProcessEnv;
  /** Values from command-line flags, as a partial config object. */
  readonly flags?: Plain;
  readonly cwd?: string;
}

export interface LoadedConfig {
  readonly config: Config;
  /** The config file that was read, if any. */
  readonly file: string | null;
}

/** Loads and validates configuration: defaults < file < environment < flags. */
export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const env = options.env ?? process.env;
  const { data: fileLayer, file } = readConfigFile(options.configPath, options.cwd);
  const envLayer = envToLayer(env);
  const flagLayer = options.flags ?? {};
  const merged = deepMerge(deepMerge(fileLayer, envLayer.layer), flagLayer);
  // parsed once per process: zod's compiled fast path would cost more to generate than it saves
  const parsed = configSchema.safeParse(merged, { jitless: true });
  if (parsed.success) return { config: parsed.data, file };
  const layers = { file, fileLayer, envLayer, flagLayer };
  const issues = parsed.error.issues.flatMap((issue) => {
    // An unknown key is reported where that key was given, not where its parent object was.
    if (issue.code === 'unrecognized_keys') {
      return (issue as { keys: string[] }).keys.map((key) => {
        const path = [...issue.path, key];
        const where = originOf(path, layers);
        return `${path.map(String).join('.')}: unknown key${where ? ` (from ${where})` : ''}`;
      });
    }
    const where = originOf(issue.path, layers);
    return [`${formatIssue(issue)}${where ? ` (from ${where})` : ''}`];
  });
  throw new ConfigError(issues, {
    reason: 'invalid-config',
    fix: 'correct the values above (perfmine --help lists flags; docs/configuration.md lists config keys)',
  });
}

function readConfigFile(explicit: string | undefined, cwd = process.cwd()): { data: Plain; file: string | null } {
  const path = explicit ?? (existsSync(`${cwd}/${DEFAULT_CONFIG_FILE}`) ? `${cwd}/${DEFAULT_CONFIG_FILE}` : null);
  if (path === null) return { data: {}, file: null };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const fix = 'pass --config a JSON file (perfmine.config.json), or leave --config out to read ./perfmine.config.json when there is one';
    if (code === 'ENOENT') throw new ConfigError(`config: no file at ${path}`, { reason: 'config-unreadable', fix });
    if (code === 'EISDIR')
      throw new ConfigError(`config: ${path} is a directory; --config names a JSON file`, { reason: 'config-unreadable', fix });
    if (code === 'EACCES')
      throw new ConfigError(`config: cannot read ${path}: permission denied`, {
        reason: 'config-unreadable',
        fix: 'run as a user who can read it, or pass --config another file',
      });
    throw new ConfigError(`config: cannot read ${path}: ${(error as Error).message}`, { reason: 'config-unreadable', fix });
  }
  let data: unknown;
  try {
    data = JSON5.parse(text);
  } catch (error) {
    throw new ConfigError(`config: ${path} is not valid JSON: ${(error as Error).message}`, { reason: 'config-unreadable' });
  }
  if (!isPlain(data)) throw new ConfigError(`config: ${path} must hold a JSON object`, { reason: 'invalid-config' });
  return { data, file: path };
}

function envToLayer(env: NodeJS.ProcessEnv): { layer: Plain; used: Map<string, string> } {
  const layer: Plain = {};
  const used = new Map<string, string>();
  for (const entry of ENV_MAP) {
    const raw = env[entry.name];
    if (raw === undefined || raw === '') continue;
    const value = entry.number && /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw;
    setPath(layer, entry.path, value);
    used.set(entry.path.join('.'), entry.name);
  }
  return { layer, used };
}

export function formatIssue(issue: z.core.$ZodIssue): string {
  const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
  if (issue.code === 'unrecognized_keys') {
    const keys = (issue as { keys: string[] }).keys;
    return keys.map((k) => `${path === '(top level)' ? k : `${path}.${k}`}: unknown key`).join('\n');
  }
  return `${path}: ${issue.message}`;
}

function originOf(
  path: readonly PropertyKey[],
  layers: { file: string | null; fileLayer: Plain; envLayer: { layer: Plain; used: Map<string, string> }; flagLayer: Plain },
): string | null {
  const key = path.map(String).join('.');
  // The whole object (a problem at the top level) comes from every layer: name the file if any.
  if (path.length === 0) return layers.file;
  if (getPath(layers.flagLayer, path) !== undefined) return `--${flagName(path)}`;
  const envName = layers.envLayer.used.get(key);
  if (envName) return `environment ${envName}`;
  if (layers.file && getPath(layers.fileLayer, path) !== undefined) return layers.file;
  return layers.file;
}

function flagName(path: readonly PropertyKey[]): string {
  const last = String(path.at(-1) ?? '');
  return last.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function isPlain(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function deepMerge(base: Plain, over: Plain): Plain {
  const out: Plain = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    const prev = out[key];
    out[key] = isPlain(prev) && isPlain(value) ? deepMerge(prev, value) : value;
  }
  return out;
}

export function setPath(target: Plain, path: readonly string[], value: unknown): void {
  let node = target;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (!isPlain(next)) node[part] = {};
    node = node[part] as Plain;
  }
  node[path.at(-1)!] = value;
}

function getPath(target: Plain, path: readonly PropertyKey[]): unknown {
  let node: unknown = target;
  for (const part of path) {
    if (!isPlain(node)) return undefined;
    node = node[String(part)];
  }
  return node;
}
