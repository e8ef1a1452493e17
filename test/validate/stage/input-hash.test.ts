import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigInput } from '../../../pipeline/config/schema.js';
import { runStage } from '../../../pipeline/runner.js';
import { openStore, type Db } from '../../../cache/store.js';
import { createValidateStage } from '../../../stages/validate/index.js';
import { monthScope, testConfig, testContext } from '../../helpers/context.js';
import { storeCandidate } from './candidate.js';
import { FakeRunner } from './fake-runner.js';

/**
 * What re-measures a validated candidate, through the runner and the real ledger (SQLite), with
 * the container seam faked (fake-runner.ts serves real asv results; the placebo is dropped as
 * no-improvement after its measurement). The table of every setting is test/run/input-hashes.test.ts.
 */
describe('validate: which configuration changes re-measure a candidate', () => {
  let db: Db;
  beforeEach(() => {
    db = openStore(':memory:');
  });
  afterEach(() => db.close());

  const BASE: ConfigInput = { validate: { engine: 'asv' } };

  async function validate(config: ConfigInput) {
    const fake = new FakeRunner({});
    const ctx = testContext(db, { config: testConfig(config) });
    const report = await runStage(
      ctx,
      createValidateStage(() => fake),
      monthScope('2025-04'),
    );
    return { fake, report };
  }

  it('skips the candidate for settings that cannot change its result, and measures it again for one that can', async () => {
    const { key } = storeCandidate(db);
    const first = await validate(BASE);
    expect(first.report).toMatchObject({ planned: 1, ran: 1, reused: 0 });
    expect(first.fake.calls.filter((c) => c.startsWith('asv '))).toHaveLength(14);

    // image retention, another repository's network, scheduling, progress, the other engine's protocol, LLM sampling
    const irrelevant: ConfigInput = {
      validate: { engine: 'asv', keepExpertImages: true, networkRepos: ['other/lib'], selectionControls: 9, harness: { rounds: 40 } },
      docker: { concurrency: 2, diskCheckSeconds: 30 },
      progressIntervalSeconds: 60,
      llm: { temperature: 0.5 },
    };
    const second = await validate(irrelevant);
    expect(second.report).toMatchObject({ planned: 1, ran: 0, reused: 1 });
    expect(second.fake.calls).toEqual([]);

    // asv's rounds per invocation change every measurement
    const third = await validate({ ...irrelevant, validate: { ...irrelevant.validate, rounds: 3 } });
    expect(third.report).toMatchObject({ planned: 1, ran: 1, reused: 0 });
    expect(third.fake.settings[0]).toMatchObject({ rounds: 3 });

    // listing the candidate's own repository turns its network on
    const fourth = await validate({
      ...irrelevant,
      validate: { ...irrelevant.validate, rounds: 3, networkRepos: ['other/lib', 'acme/fastlib'] },
    });
    expect(fourth.report).toMatchObject({ planned: 1, ran: 1, reused: 0 });
    expect(fourth.fake.environments.map((e) => [e.key, e.network])).toEqual([[key, true]]);
  });

  it('gives the network to the candidates of the repositories in validate.networkRepos, and to no other', async () => {
    const listed = storeCandidate(db, { repo: 'other/lib', number: 5, url: 'https://github.com/other/lib/pull/5' });
    const unlisted = storeCandidate(db);
    const { fake, report } = await validate({ validate: { engine: 'asv', networkRepos: ['other/lib'] } });
    expect(report).toMatchObject({ planned: 2, ran: 2 });
    const network = Object.fromEntries(fake.environments.map((e) => [e.key, e.network]));
    expect(network).toEqual({ [listed.key]: true, [unlisted.key]: false });
  });

  it("gives a repository's own pytest arguments to its candidates' environments, and measures only those again", async () => {
    const listed = storeCandidate(db, { repo: 'other/lib', number: 5, url: 'https://github.com/other/lib/pull/5' });
    storeCandidate(db);
    const global: ConfigInput = { validate: { engine: 'asv', pytestArgs: ['-x'] } };
    const first = await validate(global);
    expect(first.report).toMatchObject({ planned: 2, ran: 2 });
    const second = await validate({ ...global, repositories: { 'other/lib': { pytestArgs: ['-o', 'addopts='] } } });
    // only the listed repository's candidate is measured again, its expert build given its arguments
    expect(second.report).toMatchObject({ planned: 2, ran: 1, reused: 1 });
    expect(second.fake.environments.map((e) => [e.key, e.pytestArgs])).toEqual([[listed.key, ['-o', 'addopts=']]]);
  });
});
