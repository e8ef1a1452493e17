import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { parseSource, type Scope, type Source } from '../scope.js';
import { isStageName, STAGE_NAMES, type StageName } from '../stage.js';
import { isMonth, monthWindow, parseInstant, previousMonth, rangeWindow, type Window } from '../window.js';

/** Window, repository and source flags shared by `run` and `stage`, as commander parsed them. */
export interface ScopeFlags {
  readonly month?: string;
  readonly since?: string;
  readonly until?: string;
  readonly repo?: readonly string[];
  readonly pr?: readonly string[];
  readonly source?: string;
}

const REPO_RE = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/**
 * Turns flags into a Scope, collecting every problem as a `--flag: message` line. With no window
 * flag the window is the previous full calendar month (the cron case).
 */
export function resolveScope(flags: ScopeFlags, config: Config, now: Date = new Date()): Scope {
  const issues: string[] = [];
  const window = resolveWindow(flags, now, issues);

  const repos = flags.repo?.length ? flags.repo : config.repos;
  for (const repo of flags.repo ?? []) if (!REPO_RE.test(repo)) issues.push(`--repo: expected owner/name, got "${repo}"`);

  const prs: number[] = [];
  for (const pr of flags.pr ?? []) {
    if (/^[1-9]\d*$/.test(pr)) prs.push(Number(pr));
    else issues.push(`--pr: expected a pull request number, got "${pr}"`);
  }

  let source: Source = { kind: 'github' };
  const spec = flags.source ?? config.source;
  try {
    source = parseSource(spec);
    if (source.kind === 'git') {
      const path = resolve(source.path);
      if (!existsSync(path)) issues.push(`--source: no directory at ${source.path}`);
      else if (!statSync(path).isDirectory()) issues.push(`--source: ${source.path} is a file; git:PATH names a clone's directory`);
      source = { kind: 'git', path };
    }
  } catch (error) {
    issues.push(`--source: ${(error as Error).message}`);
  }

  if (issues.length > 0 || !window) throw new ConfigError(issues, { reason: 'invalid-flags', fix: 'see perfmine <command> --help' });
  return { window, repos: [...new Set(repos)], prs, source };
}

function resolveWindow(flags: ScopeFlags, now: Date, issues: string[]): Window | null {
  if (flags.month !== undefined && (flags.since !== undefined || flags.until !== undefined)) {
    issues.push('--month: give either --month or --since/--until, not both');
    return null;
  }
  if (flags.month !== undefined) {
    if (!isMonth(flags.month)) {
      issues.push(`--month: expected YYYY-MM, got "${flags.month}"`);
      return null;
    }
    return monthWindow(flags.month);
  }
  if (flags.since !== undefined || flags.until !== undefined) {
    const since = flags.since === undefined ? null : parseInstant(flags.since);
    const until = flags.until === undefined ? null : parseInstant(flags.until);
    if (flags.since === undefined) issues.push('--since: required with --until');
    else if (!since) issues.push(`--since: expected a date (YYYY-MM-DD) or an ISO 8601 time, got "${flags.since}"`);
    if (flags.until === undefined) issues.push('--until: required with --since');
    else if (!until) issues.push(`--until: expected a date (YYYY-MM-DD) or an ISO 8601 time, got "${flags.until}"`);
    if (!since || !until) return null;
    if (since.getTime() >= until.getTime()) {
      issues.push('--until: must be after --since (the window is [since, until))');
      return null;
    }
    return rangeWindow(since, until);
  }
  return monthWindow(previousMonth(now));
}

export function resolveMonthFlag(month: string | undefined): Window | null {
  if (month === undefined) return null;
  if (!isMonth(month)) throw new ConfigError(`--month: expected YYYY-MM, got "${month}"`, { reason: 'invalid-flags' });
  return monthWindow(month);
}

export function resolveStageFlag(flag: string, name: string | undefined): StageName | undefined {
  if (name === undefined) return undefined;
  if (!isStageName(name))
    throw new ConfigError(`${flag}: unknown stage "${name}"; the stages are ${STAGE_NAMES.join(', ')}`, { reason: 'unknown-stage' });
  return name;
}
