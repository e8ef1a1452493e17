import { saveRepository, type RepositoryRecord } from '../../cache/repositories.js';
import { missingCredential } from '../../pipeline/credentials.js';
import { defineStage, type WorkItem } from '../../pipeline/stage.js';
import { openLocalRepository } from '../../pipeline/services/git.js';
import { describeClone, enrichFromGitHub } from './enrich.js';
import type { DiscoverInput } from './input.js';
import { cloneResultSettings, discoverResultSettings } from './result-settings.js';
import { listCandidates } from './sources.js';

/**
 * discover: the repositories to mine. Candidates come from BigQuery, GitHub code search, a
 * list file or `--repo`; each is enriched through the GitHub API and filtered (stars, fork,
 * archived, activity, Python version, asv config), every rejection recorded with its reason.
 * With `--source git:PATH` the local clone is the one repository.
 */
export const discoverStage = defineStage<DiscoverInput, RepositoryRecord>({
  name: 'discover',
  version: 1,
  description: 'repositories with asv benchmarks, enriched and filtered',
  system: 'github',

  preflight(ctx, scope) {
    if (scope.source.kind === 'git') return;
    if (scope.repos.length === 0 && ctx.config.discover.source === 'bigquery') ctx.services.bigquery.checkConfigured();
    if (ctx.credentials.githubTokens.length === 0) {
      throw missingCredential(
        'GITHUB_TOKEN',
        'discover (code search and enrichment through the GitHub API)',
        'discover --source git:PATH records a local clone without any API; set GITHUB_TOKEN (or GITHUB_TOKENS=a,b,c) for the API',
      );
    }
  },

  async plan(ctx, scope) {
    if (scope.source.kind === 'git') {
      const git = ctx.services.git;
      const path = scope.source.path;
      const { name, defaultBranch, tip } = await openLocalRepository(git, path, scope.repos);
      return [
        {
          key: name,
          repo: name,
          at: null,
          input: { via: 'git', name, path, defaultBranch, tip, settings: cloneResultSettings(ctx.config) },
        },
      ];
    }
    const rules = discoverResultSettings(ctx.config);
    const candidates = await listCandidates(ctx, scope);
    return candidates.map((c): WorkItem<DiscoverInput> => ({
      key: c.name,
      repo: c.name,
      at: null,
      input: {
        via: c.via,
        name: c.name,
        asvConfigPath: c.asvConfigPath,
        asOf: scope.window.end,
        rules,
      },
    }));
  },

  run(ctx, item) {
    return item.input.via === 'git' ? describeClone(ctx, item.input) : enrichFromGitHub(ctx, item.input);
  },

  persist(db, _item, outcome) {
    if (outcome.output) saveRepository(db, outcome.output);
  },
});
