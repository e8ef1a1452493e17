import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BuildScripts, type NewAttempt } from '../../cache/build-scripts.js';
import { FingerprintCache } from '../../cache/fingerprints.js';
import { openStore, type Db } from '../../cache/store.js';
import { configSchema } from '../../pipeline/config/schema.js';
import { createContext } from '../../pipeline/context.js';
import { ItemError } from '../../pipeline/errors.js';
import { decodeNumbers, encodeNumbers, stageRemote, stageWorkerHandlers } from '../../pipeline/executor/stage-remote.js';
import { applyWrites, readSlice, seedStore, sliceWrites } from '../../pipeline/executor/store-slice.js';
import { readJobResult, writeJobInput } from '../../pipeline/executor/spool.js';
import { runWorker, TERMINATED } from '../../pipeline/executor/worker.js';
import { tempDir } from '../helpers/harness.js';
import { createLogger } from '../../pipeline/logging.js';
import { registry } from '../../pipeline/registry.js';
import { defineStage, type ItemContext, type WorkItem } from '../../pipeline/stage.js';
import { newAttempt } from '../synthesize/harness.js';

/**
 * A stage item as a Slurm job, without the cluster: the coordinator's payload, the node's run of
 * the stage's own `run` against the slice of the store it was given (as the worker process does,
 * through JSON as the spool does), and the ingest of what it wrote. The real cluster runs it in
 * test/executor/demo-month.slurm.test.ts.
 */
const config = configSchema.parse({ logLevel: 'silent' });
const credentials = { githubTokens: [], openaiApiKey: undefined, googleApplicationCredentials: undefined, bigqueryProject: undefined };

function itemContext(db: Db, key: string): ItemContext {
  const ctx = createContext({ config, credentials, db, log: createLogger({ level: 'silent', format: 'json' }) });
  return { ...ctx, stage: 'synthesize', key };
}

function attempt(repo: string, sha: string, outcome: NewAttempt['outcome'], script = `#!/bin/bash\n# ${sha}\n`): NewAttempt {
  return newAttempt({ repo, sha, script, scriptHash: `h-${sha}`, outcome });
}

interface Out {
  readonly attemptId: number;
  readonly neighbours: string[];
  readonly speedup: number;
}

/** Reads the repository's verified scripts, records one new attempt and fingerprints, as synthesize and validate do. */
const stage = defineStage<{ repo: string; sha: string }, Out>({
  name: 'synthesize',
  version: 1,
  description: 'reads and writes the store like a container stage',
  system: 'docker',
  async plan() {
    return [];
  },
  async run(ctx, item) {
    const scripts = new BuildScripts(ctx.db);
    const neighbours = scripts.verifiedScripts(item.input.repo).map((s) => s.sha);
    if (item.input.sha === 'boom') throw new ItemError('no-verified-script', 'nothing built');
    const attemptId = scripts.record(attempt(item.input.repo, item.input.sha, 'verified', '#!/bin/bash\n# built on the node\n'));
    new FingerprintCache(ctx.db).save(item.input.repo, item.input.sha, '2025-04-02T00:00:00.000Z', [
      { workload: 'bench.time_a', version: 'v1', code: [['x/a.py', 1, 9]], opaque: false, ms: 12 },
    ]);
    ctx.metrics.add('docker.buildMs', 1234);
    return { status: 'done', output: { attemptId, neighbours, speedup: Infinity }, detail: `attempt ${attemptId}` };
  },
  remote: stageRemote<{ repo: string; sha: string }, Out, unknown>('synthesize', {
    reads: (item) => [{ table: 'build_attempts', where: "repo = ? AND outcome = 'verified'", params: [item.input.repo] }],
    writes: [{ table: 'build_attempts', id: 'id' }, { table: 'fingerprints' }],
    adopt(outcome, ids) {
      if (outcome.status !== 'done') return outcome;
      return { ...outcome, output: { ...outcome.output, attemptId: ids.get('build_attempts')!.get(outcome.output.attemptId)! } };
    },
  }),
});

/** What crosses the spool: JSON text, both ways. */
const throughSpool = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;

describe('a stage item run on a node from a slice of the store', () => {
  it('reads only the declared rows, writes back only what the item wrote, and hands the coordinator its own ids', async () => {
    const coordinator = openStore(':memory:');
    const scripts = new BuildScripts(coordinator);
    scripts.record(attempt('o/a', 's1', 'verified'));
    scripts.record(attempt('o/b', 's2', 'verified'));
    scripts.record(attempt('o/a', 's3', 'failed'));
    scripts.record(attempt('o/a', 's4', 'verified'));
    const item: WorkItem<{ repo: string; sha: string }> = { key: 'o/a@s5', input: { repo: 'o/a', sha: 's5' }, repo: 'o/a', at: null };

    const payload = stage.remote!.payload(itemContext(coordinator, item.key), item) as { seed: Record<string, { sha: string }[]> };
    expect(payload.seed['build_attempts']!.map((r) => r.sha)).toEqual(['s1', 's4']);

    const result = await stage.remote!.work!(stage, throughSpool(payload), new AbortController().signal);
    // meanwhile another item's attempt takes the next id on the coordinator
    const other = scripts.record(attempt('o/b', 's6', 'failed'));

    const ctx = itemContext(coordinator, item.key);
    const outcome = coordinator.transaction(() => stage.remote!.ingest(ctx, throughSpool(result), item))();
    expect(outcome.status).toBe('done');
    const output = (outcome as { output: Out }).output;
    // the node saw the repository's verified scripts and nothing else
    expect(output.neighbours).toEqual(['s1', 's4']);
    expect(output.speedup).toBe(Infinity);
    // the node's attempt id (5 there) is the coordinator's new row
    expect(output.attemptId).toBe(other + 1);
    expect(scripts.get(output.attemptId)).toMatchObject({ repo: 'o/a', sha: 's5', script: '#!/bin/bash\n# built on the node\n' });
    expect(coordinator.prepare('SELECT COUNT(*) AS n FROM build_attempts').get()).toEqual({ n: 6 });
    expect(new FingerprintCache(coordinator).at('o/a', 's5')?.fingerprints.get('bench.time_a')).toMatchObject({
      code: [['x/a.py', 1, 9]],
      ms: 12,
    });
    expect(ctx.metrics.get('docker.buildMs')).toBe(1234);
  });

  it("a failure on the node is the item's failure, with its reason", async () => {
    const coordinator = openStore(':memory:');
    const item = { key: 'o/a@boom', input: { repo: 'o/a', sha: 'boom' } };
    const payload = stage.remote!.payload(itemContext(coordinator, item.key), item);
    await expect(stage.remote!.work!(stage, throughSpool(payload), new AbortController().signal)).rejects.toMatchObject({
      reason: 'no-verified-script',
    });
  });

  it('refuses a result that writes a table the stage did not declare, and a seeded row changed in an id table', () => {
    const node = openStore(':memory:');
    const seed = readSlice(node, []);
    expect(() => applyWrites(openStore(':memory:'), [{ table: 'fingerprints' }], { build_attempts: [] })).toThrow(
      /table build_attempts, which this stage does not write/,
    );
    new BuildScripts(node).record(attempt('o/a', 's1', 'verified'));
    const seeded = readSlice(node, [{ table: 'build_attempts', where: 'repo = ?', params: ['o/a'] }]);
    node.prepare("UPDATE build_attempts SET outcome = 'failed'").run();
    expect(() => sliceWrites(node, seeded, [{ table: 'build_attempts', id: 'id' }])).toThrow(/append-only/);
    expect(sliceWrites(node, seed, [{ table: 'fingerprints' }])).toEqual({});
    const fresh = openStore(':memory:');
    seedStore(fresh, seeded);
    expect(readSlice(fresh, [{ table: 'build_attempts', where: '1', params: [] }])).toEqual(seeded);
  });

  it('carries NaN and the infinities through JSON', () => {
    const value = { a: [1, NaN, -Infinity], b: { c: Infinity, d: null, e: 'x' } };
    const back = decodeNumbers(throughSpool(encodeNumbers(value))) as typeof value;
    expect(back.a[0]).toBe(1);
    expect(back.a[1]).toBeNaN();
    expect(back.a[2]).toBe(-Infinity);
    expect(back.b).toEqual({ c: Infinity, d: null, e: 'x' });
  });

  it('synthesize and validate run on the node; their slices read the migrated store', () => {
    expect(Object.keys(stageWorkerHandlers(Object.values(registry))).sort()).toEqual(['stage:synthesize', 'stage:validate']);
    const db = openStore(':memory:');
    const fingerprint = { workload: 'w', version: null, code: null, opaque: false, ms: 12 };
    new FingerprintCache(db).save('o/a', 's', '2025-04-02T00:00:00.000Z', [fingerprint]);
    new FingerprintCache(db).save('o/b', 's', '2025-04-02T00:00:00.000Z', [fingerprint]);
    new BuildScripts(db).record(attempt('o/a', 's', 'verified'));
    const classify = { repo: 'o/a', number: 7 };
    const validate = registry.validate.remote!.payload(itemContext(db, 'o/a#7'), {
      key: 'o/a#7',
      input: { classify, synthesize: {}, prContentHash: 'h', settings: {} },
    }) as { seed: Record<string, { repo: string }[]> };
    expect(validate.seed['pull_requests']).toEqual([]);
    expect(validate.seed['fingerprints']!.map((r) => r.repo)).toEqual(['o/a']);
    const synthesize = registry.synthesize.remote!.payload(itemContext(db, 'o/a@s'), { key: 'o/a@s', input: { repo: 'o/a', sha: 's' } });
    expect(synthesize).toMatchObject({
      item: { key: 'o/a@s', repo: null },
      runId: null,
      seed: { build_attempts: [{ repo: 'o/a', sha: 's' }] },
    });
  });

  it('a job ended by Slurm (SIGTERM) writes no result, so the coordinator resubmits it by its state; a failure writes one', async () => {
    const spool = tempDir('perfmine-worker-');
    const input = { version: 1 as const, stage: 'synthesize', key: 'k', kind: 'slow', payload: null };
    const handlers = {
      // stops when the job is told to end (Slurm's SIGTERM, sent here through the process's own listeners)
      slow: (_input: unknown, env: { signal: AbortSignal }) =>
        new Promise<never>((_resolve, reject) => {
          env.signal.addEventListener('abort', () => reject(new Error('containers stopped')));
          process.emit('SIGTERM', 'SIGTERM');
        }),
      broken: () => Promise.reject(new ItemError('no-verified-script', 'nothing built')),
    };
    const listeners = process.listenerCount('SIGTERM');
    const ended = writeJobInput(spool, 'pm-ended', input);
    expect(await runWorker(ended, 'pm-ended', handlers)).toBe(TERMINATED);
    expect(existsSync(join(ended, 'result.json'))).toBe(false);
    expect(process.listenerCount('SIGTERM')).toBe(listeners);

    const failed = writeJobInput(spool, 'pm-failed', { ...input, kind: 'broken' });
    expect(await runWorker(failed, 'pm-failed', handlers)).toBe(0);
    expect(readJobResult(spool, 'pm-failed').result).toMatchObject({ ok: false, error: { reason: 'no-verified-script' } });
  });
});
