import { ConfigError } from './errors.js';

/**
 * Credentials come only from the environment and never enter the configuration, the database,
 * a log line, an image or a container. `secretValues` lists them for the log redactor.
 */
export interface Credentials {
  /** GITHUB_TOKENS (comma-separated, rotated) or GITHUB_TOKEN. */
  readonly githubTokens: readonly string[];
  readonly openaiApiKey: string | undefined;
  /** Path of a service-account key file (its content is never read by perfmine itself). */
  readonly googleApplicationCredentials: string | undefined;
  readonly bigqueryProject: string | undefined;
}

export function readCredentials(env: NodeJS.ProcessEnv = process.env): Credentials {
  const tokens = (env.GITHUB_TOKENS ?? '')
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t.length > 0);
  if (tokens.length === 0 && env.GITHUB_TOKEN?.trim()) tokens.push(env.GITHUB_TOKEN.trim());
  return {
    githubTokens: tokens,
    openaiApiKey: nonEmpty(env.OPENAI_API_KEY),
    googleApplicationCredentials: nonEmpty(env.GOOGLE_APPLICATION_CREDENTIALS),
    bigqueryProject: nonEmpty(env.BIGQUERY_PROJECT),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}

/** Every credential value, for redaction of logs and for tests that hunt for leaks. */
export function secretValues(credentials: Credentials): string[] {
  return [...credentials.githubTokens, credentials.openaiApiKey].filter((v): v is string => typeof v === 'string' && v.length >= 4);
}

/**
 * A missing credential: names the variable, what needs it, and what works without it. Thrown by
 * a stage's preflight, before any item starts, so that a stage never crashes half-way.
 */
export function missingCredential(variable: string, neededFor: string, withoutIt: string): ConfigError {
  return new ConfigError(`${variable}: not set; ${neededFor} needs it`, { reason: 'missing-credential', fix: withoutIt });
}
