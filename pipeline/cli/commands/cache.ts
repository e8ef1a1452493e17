import { BuildScripts, type Attempt, type RebuildSpec, type RepoStats, type StoredScan } from '../../../cache/build-scripts.js';
import { checkDatabasePath } from '../../../cache/database-path.js';
import { openStore, type Db } from '../../../cache/store.js';
import { noteDb } from '../db-label.js';
import { parseCommitKey } from '../../concepts/keys.js';
import { rebuildEnvironment } from '../../../stages/synthesize/rebuild.js';
import { ConfigError, EXIT } from '../../errors.js';
import { DockerService } from '../../services/docker.js';
import { openSession, print, printJson, type GlobalFlags } from '../session.js';
import { describeLock } from '../../services/environments/lock.js';

/** One line per attempt (newest first), for `perfmine cache scripts`. Pure. */
export function attemptSummary(a: Attempt) {
  return {
    id: a.id,
    key: `${a.repo}@${a.sha}`,
    commitDate: a.commitDate,
    source: a.source,
    sourceDetail: a.sourceDetail,
    outcome: a.outcome,
    failingStep: a.failingStep,
    failureKind: a.failureKind,
    failure: a.failure,
    durationMs: a.durationMs,
    llmCalls: a.llmCalls,
    tokens: a.promptTokens + a.completionTokens,
    imageTag: a.imageTag,
    /** The outside scan's verdict and time, when the attempt's image was scanned. */
    scan: a.scan ? { verdict: a.scan.verdict, durationMs: a.scan.durationMs } : null,
    createdAt: a.createdAt,
  };
}

/** Everything `perfmine cache show` prints for a commit. Pure (over the attempts). */
export function commitReport(attempts: readonly Attempt[]) {
  const verified = [...attempts].reverse().find((a) => a.outcome === 'verified') ?? null;
  const lastFailure = [...attempts].reverse().find((a) => a.outcome !== 'verified') ?? null;
  const basis = verified ?? attempts.at(-1) ?? null;
  const rebuild: (RebuildSpec & { readonly command: string }) | null = basis
    ? {
        repo: basis.repo,
        sha: basis.sha,
        script: basis.script,
        baseImage: basis.baseImage,
        toolchainImage: basis.toolchainImage,
        repoImage: basis.repoImage,
        cloneSource: basis.cloneSource,
        asvConfigPath: basis.asvConfigPath,
        importName: basis.importName,
        pythonVersion: basis.pythonVersion,
        command: `perfmine cache rebuild ${basis.repo}@${basis.sha}`,
      }
    : null;
  return {
    key: basis ? `${basis.repo}@${basis.sha}` : null,
    commitDate: basis?.commitDate ?? null,
    status: verified ? 'verified' : attempts.length > 0 ? 'no verified script' : 'never built',
    imageTag: verified?.imageTag ?? null,
    verified: verified
      ? {
          attemptId: verified.id,
          source: verified.source,
          sourceDetail: verified.sourceDetail,
          script: verified.script,
          scan: verified.scan ?? null,
          lock: verified.lock ?? null,
        }
      : null,
    lastFailure: lastFailure
      ? {
          attemptId: lastFailure.id,
          source: lastFailure.source,
          sourceDetail: lastFailure.sourceDetail,
          failingStep: lastFailure.failingStep,
          failureKind: lastFailure.failureKind,
          failure: lastFailure.failure,
          script: lastFailure.script,
          stdoutTail: lastFailure.stdoutTail,
          stderrTail: lastFailure.stderrTail,
          scan: lastFailure.scan ?? null,
        }
      : null,
    attempts: attempts.map(attemptSummary),
    rebuild,
  };
}

/** The outside scan of an attempt's image in lines (`perfmine cache show`). Pure. */
export function formatScan(scan: StoredScan | null): string[] {
  if (!scan) return [];
  const size =
    scan.filesRead === undefined
      ? ''
      : `, ${scan.filesRead} files${scan.bytesRead === undefined ? '' : `, ${Math.round(scan.bytesRead / 1024 / 1024)} MiB`}`;
  const head = `outside scan: ${scan.verdict} in ${(scan.durationMs / 1000).toFixed(1)} s${size}`;
  const count = scan.findingCount ?? scan.findings.length;
  return [
    head,
    ...scan.findings.map((f) => `  ${f.path} (${f.rule}): ${f.detail}`),
    ...(count > scan.findings.length ? [`  ... and ${count - scan.findings.length} more`] : []),
  ];
}

export function formatStats(stats: readonly RepoStats[]): string {
  if (stats.length === 0) return 'no build attempts yet';
  const header = ['repository', 'commits', 'verified', 'success', 'reuse', 'attempts', 'LLM calls', 'tokens'];
  const rows = stats.map((s) => [
    s.repo,
    String(s.commits),
    String(s.verifiedCommits),
    `${(100 * s.successRate).toFixed(0)}%`,
    `${(100 * s.reuseRate).toFixed(0)}%`,
    String(s.attempts),
    String(s.llmCalls),
    String(s.promptTokens + s.completionTokens),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

function openReadonly(path: string, json: boolean): Db | null {
  if (checkDatabasePath(path, 'read') !== 'sqlite') return null;
  if (!json) noteDb(path);
  return openStore(path, { readonly: true });
}

const REPO_RE = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;

/** A commit key as `cache show` and `cache rebuild` take it; a ConfigError that shows what one looks like. */
export function parseKey(command: string, key: string): { repo: string; sha: string } {
  const parsed = parseCommitKey(key);
  if (!parsed) {
    throw new ConfigError(
      `cache ${command}: "${key}" is not a commit key; a key is owner/name@sha: the repository, "@", and the commit's SHA in lowercase hex (7 to 64 characters), e.g. demo/fastmath@3f2a9c1`,
      {
        reason: 'invalid-flags',
        fix: 'perfmine cache scripts lists the keys of every build attempt; perfmine status --stage synthesize --items lists the commits',
      },
    );
  }
  return parsed;
}

/** `--repo` of the cache commands (owner/name), or undefined. */
export function parseRepoFlag(repo: string | undefined): string | undefined {
  if (repo !== undefined && !REPO_RE.test(repo))
    throw new ConfigError(`--repo: expected owner/name, e.g. demo/fastmath, got "${repo}"`, { reason: 'invalid-flags' });
  return repo;
}

/** `--limit`: a positive whole number. */
export function parseLimit(limit: string): number {
  if (!/^[1-9]\d*$/.test(limit))
    throw new ConfigError(`--limit: expected a positive whole number, got "${limit}"`, { reason: 'invalid-flags' });
  return Number(limit);
}

export function cacheScriptsCommand(flags: { repo?: string; limit: string }, globals: GlobalFlags): void {
  const repo = parseRepoFlag(flags.repo);
  const limit = parseLimit(flags.limit);
  const session = openSession(globals);
  const db = openReadonly(session.config.db, session.json);
  const list = db ? new BuildScripts(db).list({ ...(repo ? { repo } : {}), limit }).map(attemptSummary) : [];
  db?.close();
  if (session.json) return printJson({ attempts: list });
  if (list.length === 0) return print('no build attempts');
  for (const a of list) {
    const what = a.outcome === 'verified' ? `verified -> ${a.imageTag}` : `${a.outcome} at ${a.failingStep}: ${a.failure}`;
    print(
      `#${a.id} ${a.key.replace(/@(.{12}).*/, '@$1')} ${a.source}${a.sourceDetail ? ` (${a.sourceDetail})` : ''} ${what} [${(a.durationMs / 1000).toFixed(1)} s${a.llmCalls ? `, ${a.tokens} tokens` : ''}]`,
    );
  }
}

export function cacheShowCommand(key: string, globals: GlobalFlags): void {
  const { repo, sha } = parseKey('show', key);
  const session = openSession(globals);
  const db = openReadonly(session.config.db, session.json);
  const attempts = db ? new BuildScripts(db).list({ repo, sha }).reverse() : [];
  db?.close();
  const shas = new Set(attempts.map((a) => a.sha));
  if (shas.size > 1)
    throw new ConfigError(`cache show: ${sha} is ambiguous in ${repo} (${[...shas].join(', ')})`, { reason: 'ambiguous-sha' });
  const report = commitReport(attempts);
  if (session.json) {
    printJson(report);
    return;
  }
  if (!report.key) {
    print(`${key}: never built`);
    process.exitCode = EXIT.itemsFailed;
    return;
  }
  const lines = [`${report.key} (committed ${report.commitDate}): ${report.status}${report.imageTag ? `, image ${report.imageTag}` : ''}`];
  if (report.verified)
    lines.push(
      '',
      `verified script (attempt #${report.verified.attemptId}, ${report.verified.source}${report.verified.sourceDetail ? `: ${report.verified.sourceDetail}` : ''}):`,
      report.verified.script.trimEnd(),
      ...formatScan(report.verified.scan),
      ...(report.verified.lock
        ? [
            '',
            `lock (${report.verified.lock.distributions.length} distributions):`,
            ...describeLock(report.verified.lock).map((l) => `  ${l}`),
          ]
        : ['', 'lock: none recorded (built before locks, or without the index time machine)']),
    );
  if (report.lastFailure) {
    const f = report.lastFailure;
    lines.push(
      '',
      `last failure (attempt #${f.attemptId}, ${f.source}${f.sourceDetail ? `: ${f.sourceDetail}` : ''}) at step ${f.failingStep}: ${f.failure}`,
      'script:',
      f.script.trimEnd(),
    );
    if (f.stderrTail.trim()) lines.push('stderr (tail):', f.stderrTail.trimEnd());
    if (f.stdoutTail.trim()) lines.push('stdout (tail):', f.stdoutTail.trimEnd());
    lines.push(...formatScan(f.scan));
  }
  if (report.rebuild) {
    const r = report.rebuild;
    lines.push(
      '',
      'to rebuild:',
      `  base image:      ${r.baseImage}${r.toolchainImage !== r.baseImage ? ` (toolchain ${r.toolchainImage})` : ''}`,
      `  clone:           ${r.cloneSource} (repository image ${r.repoImage})`,
      `  commit:          ${r.sha}`,
      `  python:          ${r.pythonVersion ?? 'python3'}`,
      `  asv config:      ${r.asvConfigPath ?? '(none)'}; import: ${r.importName ?? '(unknown)'}`,
      `  command:         ${r.command}`,
    );
  }
  print(lines.join('\n'));
}

export function cacheStatsCommand(flags: { repo?: string }, globals: GlobalFlags): void {
  const repo = parseRepoFlag(flags.repo);
  const session = openSession(globals);
  const db = openReadonly(session.config.db, session.json);
  const stats = db ? new BuildScripts(db).stats(repo ? { repo } : {}) : [];
  db?.close();
  if (session.json) printJson({ repositories: stats });
  else print(formatStats(stats));
}

export async function cacheRebuildCommand(key: string, globals: GlobalFlags): Promise<void> {
  const { repo, sha } = parseKey('rebuild', key);
  const session = openSession(globals);
  if (checkDatabasePath(session.config.db, 'write') === 'absent') {
    throw new ConfigError(`db: no database at ${session.config.db}: nothing was ever built`, {
      reason: 'no-database',
      fix: 'pass --db the database of the runs that built it',
    });
  }
  const db = openStore(session.config.db);
  if (!session.json) noteDb(session.config.db);
  try {
    const store = new BuildScripts(db);
    const attempts = store.list({ repo, sha }).reverse();
    const report = commitReport(attempts);
    if (!report.rebuild || !report.verified)
      throw new ConfigError(`cache rebuild: ${key} has no verified script`, {
        reason: 'nothing-to-rebuild',
        fix: 'run perfmine stage synthesize first',
      });
    const docker = new DockerService({ runLabel: 'rebuild' });
    const result = await rebuildEnvironment(docker, session.config, report.rebuild, {
      log: session.log,
      store,
      commitDate: report.commitDate ?? new Date(0).toISOString(),
      lock: report.verified.lock,
    });
    if (session.json) printJson(result);
    else
      print(
        result.verified
          ? `${key}: verified again as ${result.imageTag} (attempt #${result.attemptId})`
          : `${key}: rebuild failed: ${result.failure}`,
      );
    process.exitCode = result.verified ? EXIT.ok : EXIT.itemsFailed;
  } finally {
    db.close();
  }
}
