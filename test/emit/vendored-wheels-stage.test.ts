import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobRef, saveBlob } from '../../cache/blobs.js';
import { openStore, type Db } from '../../cache/store.js';
import { commitKey } from '../../pipeline/concepts/keys.js';
import type { EnvironmentLock } from '../../pipeline/concepts/records/environment-lock.js';
import { runStage } from '../../pipeline/runner.js';
import type { PipelineContext } from '../../pipeline/stage.js';
import { writeDistributions } from '../../pipeline/services/package-index/dist-directory.js';
import { DirUpstream } from '../../pipeline/services/package-index/dir-upstream.js';
import { buildWheel } from '../../pipeline/services/package-index/wheel.js';
import { contentBytes, contentDigest } from '../../pipeline/services/verifier/file-content.js';
import { harborOptionsOf } from '../../pipeline/services/verifier/options.js';
import { harborEnvironmentFiles, harborTestsFiles } from '../../pipeline/services/verifier/verifier-folder.js';
import { replayStep, selfContained } from '../../pipeline/cli/commands/demo.js';
import { carriedWheels } from '../../stages/emit/carried-wheels.js';
import { createEmitStage, emitMonth } from '../../stages/emit/index.js';
import { createValidateStage } from '../../stages/validate/index.js';
import { verifiableFolder } from '../../tasks/replay/verify-replay.js';
import { readTaskFolder } from '../../tasks/replay/task-folder.js';
import { monthScope, testConfig, testContext } from '../helpers/context.js';
import { storeCandidate } from '../validate/stage/candidate.js';
import { FakeRunner } from '../validate/stage/fake-runner.js';
import { fakeSealedSources } from './fake-sealed-sources.js';

/**
 * Issue 36 in the emit stage, on a file database (validate runs with the container seam serving
 * the real rich #3399 runs, 2x speedups planted): four kept candidates whose synthesized
 * environments are locked. #101's lock came from a loopback index, and the store holds the bytes
 * the time machine kept of its one locked file: its folder carries it under wheels/ (hash-checked),
 * and so do the verifier's tests/ and the Harbor environment/. #103's file is not in the store but
 * this run's index (a `dir:` upstream) has it: emit takes it from there, checked, and keeps it.
 * #102's file is in neither: emit fails it, saying so. zeta/lib#5's lock came from a public index:
 * its folder carries nothing and installs from that index as before. A stored file whose bytes are
 * changed afterwards is refused when the month is written again, and the month on disk stays as it
 * was.
 */
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-vendored-'));
const out = join(scratch, 'out');
const month = join(out, '2025-04');
const indexDir = join(scratch, 'index');
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const WHEEL = Buffer.from('PK\u0003\u0004 the bytes of numtheory 1.0, as the demo index served them');
const WHEEL_NAME = 'numtheory-1.0-py3-none-any.whl';
const OTHER = buildWheel({ name: 'cython', version: '3.0.0', files: { 'cython/__init__.py': '' } });
const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

function lockOf(upstream: string, file: { project?: string; name: string; sha256: string }): EnvironmentLock {
  return {
    python: '3.11.2',
    cutoff: '2025-03-30T00:00:00.000Z',
    upstream,
    distributions: [
      { name: file.project ?? 'numtheory', version: '1.0', source: 'index', filename: file.name, sha256: file.sha256 },
      { name: 'fastlib', version: '0.1', source: 'editable', filename: null, sha256: null },
    ],
    build: [],
  };
}

const FAST = {
  expert: { names: new Set(['benchmarks.TextSuite.time_divide_unicode_heavy', 'benchmarks.PrettySuite.time_pretty']), factor: 0.5 },
};
const LOOPBACK = 'http://127.0.0.1:40747/simple/';

let db: Db;
let ctx: PipelineContext;
let emitted: Awaited<ReturnType<typeof runStage>>;

function setLock(repo: string, baseSha: string, lock: EnvironmentLock): void {
  db.prepare("UPDATE stage_items SET output = json_set(output, '$.lock', json(?)) WHERE stage = 'synthesize' AND key = ?").run(
    JSON.stringify(lock),
    commitKey(repo, baseSha),
  );
}

beforeAll(async () => {
  mkdirSync(indexDir, { recursive: true });
  writeDistributions(indexDir, [{ filename: OTHER.filename, bytes: OTHER.bytes, uploadTime: '2025-03-01T00:00:00Z' }]);
  db = openStore(join(scratch, 'perfmine.db'));
  storeCandidate(db, { number: 101 });
  storeCandidate(db, { number: 102, baseSha: 'd'.repeat(40), mergedAt: '2025-04-20T08:00:00Z', title: 'PERF: faster join' });
  storeCandidate(db, { number: 103, baseSha: 'e'.repeat(40), mergedAt: '2025-04-21T08:00:00Z', title: 'PERF: faster split' });
  storeCandidate(db, { repo: 'zeta/lib', number: 5, baseSha: '9'.repeat(40), url: null, mergedAt: '2025-04-03T00:00:00Z' });
  const base101 = db.prepare<[], { base_sha: string }>('SELECT base_sha FROM pull_requests WHERE number = 101').get()!.base_sha;
  setLock('acme/fastlib', base101, lockOf(LOOPBACK, { name: WHEEL_NAME, sha256: sha(WHEEL) }));
  setLock('acme/fastlib', 'd'.repeat(40), lockOf(LOOPBACK, { name: 'numtheory-1.0.tar.gz', sha256: 'e'.repeat(64) }));
  setLock('acme/fastlib', 'e'.repeat(40), lockOf(LOOPBACK, { project: 'Cython', name: OTHER.filename, sha256: sha(OTHER.bytes) }));
  setLock('zeta/lib', '9'.repeat(40), lockOf('https://pypi.org/simple/', { name: WHEEL_NAME, sha256: 'f'.repeat(64) }));
  // what the index time machine kept when it served #101's build
  saveBlob(db, WHEEL);
  ctx = testContext(db, { config: testConfig({ out, synthesize: { index: { upstream: `dir:${indexDir}` } } }) });
  const validated = await runStage(
    ctx,
    createValidateStage(() => new FakeRunner(FAST)),
    monthScope('2025-04'),
  );
  expect(validated).toMatchObject({ done: 4 });
  expect(blobRef(db, sha(OTHER.bytes))).toBeNull();
  emitted = await runStage(ctx, createEmitStage(fakeSealedSources), monthScope('2025-04'));
});
afterAll(() => db.close());

describe('emit: a folder carries its lock’s files when its index is not public', () => {
  it('writes #101 with wheels/ from the store, #103 with its file from the index, fails #102, and leaves zeta/lib#5 as before', () => {
    expect(emitted).toMatchObject({ planned: 4, done: 3, failed: { 'locked-files-missing': 1 } });
    const failed = ctx.ledger.get('emit', 'acme/fastlib#102');
    expect(failed?.status).toBe('failed');
    expect(JSON.stringify(failed)).toContain(`numtheory-1.0.tar.gz sha256:${'e'.repeat(64)} (dir:${indexDir} has no such file)`);
    expect(readdirSync(month).sort()).toEqual([
      'acme__fastlib-101',
      'acme__fastlib-103',
      'manifest.json',
      'tasks.jsonl',
      'tasks.parquet',
      'zeta__lib-5',
    ]);
    // #103: asked of the index, checked against the lock, kept in the store
    expect(readFileSync(join(month, 'acme__fastlib-103', 'wheels', OTHER.filename)).equals(OTHER.bytes)).toBe(true);
    expect(blobRef(db, sha(OTHER.bytes))?.read().equals(OTHER.bytes)).toBe(true);

    const folder = join(month, 'acme__fastlib-101');
    expect(readdirSync(join(folder, 'wheels'))).toEqual([WHEEL_NAME]);
    expect(readFileSync(join(folder, 'wheels', WHEEL_NAME)).equals(WHEEL)).toBe(true);
    expect(readFileSync(join(folder, 'wheels.sha256'), 'utf8')).toBe(`${sha(WHEEL)}  ${WHEEL_NAME}\n`);
    const lock = JSON.parse(readFileSync(join(folder, 'lock.json'), 'utf8')) as EnvironmentLock;
    expect(lock.distributions.find((d) => d.name === 'numtheory')?.sha256).toBe(sha(WHEEL));
    const dockerfile = readFileSync(join(folder, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain('COPY wheels/ /perfmine/wheels/\n');
    expect(dockerfile).toContain('--no-index --find-links /perfmine/wheels --require-hashes --no-deps -r /perfmine/requirements.lock');
    expect(dockerfile).not.toContain('PIP_INDEX_URL');
    const meta = JSON.parse(readFileSync(join(folder, 'metadata.json'), 'utf8')) as { environment: { lock: { files_carried: number } } };
    expect(meta.environment.lock.files_carried).toBe(1);
    // the manifest digests the file as the lock does
    const manifest = JSON.parse(readFileSync(join(month, 'manifest.json'), 'utf8')) as { sha256: Record<string, string> };
    expect(manifest.sha256[`acme__fastlib-101/wheels/${WHEEL_NAME}`]).toBe(sha(WHEEL));

    const publicOne = join(month, 'zeta__lib-5');
    expect(existsSync(join(publicOne, 'wheels'))).toBe(false);
    expect(existsSync(join(publicOne, 'wheels.sha256'))).toBe(false);
    expect(readFileSync(join(publicOne, 'Dockerfile'), 'utf8')).toContain('ARG PIP_INDEX_URL=https://pypi.org/simple/\n');
  });

  it('the folder read from disk gives the verifier its locked files as bytes: in tests/ (verify.json names them) and in environment/', () => {
    const options = harborOptionsOf(ctx.config);
    const task = verifiableFolder(readTaskFolder(join(month, 'acme__fastlib-101')));
    const wheel = task.blobs[`wheels/${WHEEL_NAME}`]!;
    expect(wheel.sha256).toBe(sha(WHEEL));
    expect(Buffer.from(contentBytes(wheel)).equals(WHEEL)).toBe(true);
    expect(task.files[`wheels/${WHEEL_NAME}`]).toBeUndefined();

    const tests = harborTestsFiles(task, options);
    expect(contentDigest(tests.get(`wheels/${WHEEL_NAME}`)!.content)).toBe(sha(WHEEL));
    expect(tests.get('MANIFEST.sha256')!.content as string).toContain(`${sha(WHEEL)}  wheels/${WHEEL_NAME}\n`);
    expect(JSON.parse(tests.get('perfmine/verify.json')!.content as string)).toMatchObject({
      constraints: 'constraints.txt',
      wheels: 'wheels',
    });
    const environment = harborEnvironmentFiles(task);
    expect(contentDigest(environment.get(`wheels/${WHEEL_NAME}`)!.content)).toBe(sha(WHEEL));
    expect(environment.get('wheels.sha256')!.content).toBe(`${sha(WHEEL)}  ${WHEEL_NAME}\n`);

    // a task that carries none: no locked files in tests/, and verify.json as before
    const plain = verifiableFolder(readTaskFolder(join(month, 'zeta__lib-5')));
    const plainTests = harborTestsFiles(plain, options);
    expect([...plainTests.keys()].some((p) => p.startsWith('wheels/'))).toBe(false);
    expect(JSON.parse(plainTests.get('perfmine/verify.json')!.content as string)).not.toHaveProperty('wheels');
  });

  it('says what to do when neither the store nor the index has a file, and carries nothing with "never" or from a public index', async () => {
    const item = { key: 'acme/fastlib#102', repo: 'acme/fastlib', month: '2025-04' };
    const missing = lockOf('dir:/srv/demo-index', { name: 'numtheory-1.0.tar.gz', sha256: 'e'.repeat(64) });
    await expect(carriedWheels(db, item, missing, 'auto', null)).rejects.toThrowError(
      expect.objectContaining({
        reason: 'locked-files-missing',
        message: expect.stringContaining(`numtheory-1.0.tar.gz sha256:${'e'.repeat(64)} (no index to ask)`) as unknown,
        fix: expect.stringContaining('perfmine stage emit --force --month 2025-04 --repo acme/fastlib') as unknown,
      }),
    );
    // an index whose file of that name is another: not taken
    const liar = join(scratch, 'liar');
    mkdirSync(liar, { recursive: true });
    writeDistributions(liar, [{ filename: 'numtheory-1.0.tar.gz', bytes: Buffer.from('other bytes'), uploadTime: '2025-03-01T00:00:00Z' }]);
    await expect(carriedWheels(db, item, missing, 'auto', new DirUpstream(liar))).rejects.toThrowError(
      expect.objectContaining({
        message: expect.stringContaining(`dir:${liar} serves other bytes by that name: sha256:${sha('other bytes')}`) as unknown,
      }),
    );
    expect(blobRef(db, sha('other bytes'))).toBeNull();
    expect(await carriedWheels(db, item, missing, 'never', null)).toEqual({ files: [], blobs: {} });
    expect(await carriedWheels(db, item, { ...missing, upstream: 'https://pypi.org/simple/' }, 'auto', null)).toEqual({
      files: [],
      blobs: {},
    });
    expect(await carriedWheels(db, item, null, 'always', null)).toEqual({ files: [], blobs: {} });
    const kept = lockOf('https://pypi.org/simple/', { name: WHEEL_NAME, sha256: sha(WHEEL) });
    expect(await carriedWheels(db, item, kept, 'always', null)).toEqual({
      files: [{ filename: WHEEL_NAME, sha256: sha(WHEEL) }],
      blobs: { [`wheels/${WHEEL_NAME}`]: sha(WHEEL) },
    });
    const unusable = { ...kept, distributions: [{ ...kept.distributions[0]!, filename: 'a/b.whl' }] };
    await expect(carriedWheels(db, item, unusable, 'always', null)).rejects.toThrowError(
      expect.objectContaining({ reason: 'locked-files-unusable' }),
    );
  });

  it('the demo prints its replay without --index once every task folder carries its locked files', () => {
    const carrying = [join(month, 'acme__fastlib-101'), join(month, 'acme__fastlib-103')];
    const needing = join(month, 'zeta__lib-5');
    expect(carrying.every(selfContained)).toBe(true);
    expect(selfContained(needing)).toBe(false);
    expect(replayStep({ out, dir: scratch, db: '/d/perfmine.db', folders: carrying })).toBe(
      `  perfmine replay ${month} --db /d/perfmine.db   each task rebuilt from its folder and measured again, before publishing`,
    );
    expect(replayStep({ out, dir: scratch, db: '/d/perfmine.db', folders: [...carrying, needing] })).toBe(
      `  perfmine replay ${month} --db /d/perfmine.db --index dir:${join(scratch, 'index')}   each task rebuilt from its folder and measured again, before publishing`,
    );
  });

  it('refuses to write the month again when a stored file’s bytes are no longer the lock’s, and leaves the month on disk as it was', () => {
    const before = readFileSync(join(month, 'acme__fastlib-101', 'wheels', WHEEL_NAME));
    db.prepare('UPDATE blobs SET data = ? WHERE sha256 = ?').run(Buffer.from('a wheel swapped in the store'), sha(WHEEL));
    try {
      expect(() => emitMonth(ctx, '2025-04')).toThrowError(
        expect.objectContaining({
          reason: 'file-hash-mismatch',
          message: expect.stringContaining(`acme__fastlib-101/wheels/${WHEEL_NAME}: read as sha256:${sha(WHEEL)}`) as unknown,
        }),
      );
      expect(readFileSync(join(month, 'acme__fastlib-101', 'wheels', WHEEL_NAME)).equals(before)).toBe(true);
    } finally {
      db.prepare('UPDATE blobs SET data = ? WHERE sha256 = ?').run(WHEEL, sha(WHEEL));
    }
    // with the bytes back, the month is written again, byte for byte
    emitMonth(ctx, '2025-04');
    expect(readFileSync(join(month, 'acme__fastlib-101', 'wheels', WHEEL_NAME)).equals(WHEEL)).toBe(true);
  });
});
