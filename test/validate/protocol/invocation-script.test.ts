import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parseResultsFile } from '../../../pipeline/concepts/asv/index.js';
import { asvInvocationScript, readInvocationOutput, SUITE_IMPORT_FAILURE } from '../../../stages/validate/protocol/asv-invocation.js';
import { parseFramedOutput } from '../../../stages/validate/protocol/framed-output.js';
import { readReference, RICH_DIR } from '../../concepts/asv/reference.js';
import { invocationFile } from '../invocation-files.js';

/**
 * The invocation script run by the local bash (no container) in a real git checkout, with an
 * `asv` on PATH that records its arguments and writes what real asv writes where it writes it
 * (results/<machine>/<sha8>-<env>.json, results/benchmarks.json): proves the script's command
 * lines, its stale-results cleanup and the framed hand-back.
 */
const run = promisify(execFile);
const scratch = mkdtempSync(join(tmpdir(), 'perfmine-invocation-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const RESULTS = invocationFile(readReference(`${RICH_DIR}r2x2/ab/349042fd-existing-py_usr_bin_python3.json`), 0, 10);

function fakeAsv(dir: string, mode: 'ok' | 'import-fails'): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(dir, 'results.json'), RESULTS);
  writeFileSync(join(dir, 'benchmarks.json'), '{"version": 2}');
  const script = `#!/usr/bin/env bash
echo "$@" >> ${dir}/argv.txt
if [ "$1" = machine ]; then mkdir -p results/perfmine && echo '{}' > results/perfmine/machine.json; echo "machine ok"; exit 0; fi
sha=""; prev=""; for a in "$@"; do [ "$prev" = --set-commit-hash ] && sha=$a; prev=$a; done
${mode === 'import-fails' ? `echo "·· ${SUITE_IMPORT_FAILURE}."; exit 1` : `mkdir -p results/perfmine && cp ${dir}/results.json results/perfmine/\${sha:0:8}-existing-py_usr_bin_python3.json && cp ${dir}/benchmarks.json results/benchmarks.json; echo "· Running 32 total benchmarks"; exit 2`}
`;
  writeFileSync(join(bin, 'asv'), script);
  chmodSync(join(bin, 'asv'), 0o755);
  return bin;
}

async function checkout(name: string): Promise<string> {
  const repo = join(scratch, name, 'repo');
  mkdirSync(repo, { recursive: true });
  writeFileSync(join(repo, 'asv.conf.json'), '{"version": 1}');
  mkdirSync(join(repo, 'results', 'perfmine'), { recursive: true });
  writeFileSync(join(repo, 'results', 'perfmine', 'deadbeef-stale.json'), '{"stale": true}');
  const git = (...args: string[]) => run('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
  await git('init', '-q');
  await git('add', 'asv.conf.json');
  await git('commit', '-q', '-m', 'base');
  return repo;
}

const settings = { machine: 'perfmine', bench: 'Text|Color', rounds: 2, attributes: {}, cpuAffinity: null };

describe('the asv invocation script (local bash, fake asv)', () => {
  it('clears stale results, runs asv on HEAD, and hands back the results file, benchmarks.json and the log', async () => {
    const repo = await checkout('ok');
    const bin = fakeAsv(join(scratch, 'ok'), 'ok');
    const script = asvInvocationScript({ repoDir: repo, configPath: 'asv.conf.json', resultsDir: 'results' }, settings);
    const { stdout } = await run('bash', ['-c', script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    const out = readInvocationOutput(stdout);
    const head = (await run('git', ['-C', repo, 'rev-parse', 'HEAD'])).stdout.trim();
    expect(out).toMatchObject({ asvExitCode: 2, commit: head, benchmarks: '{"version": 2}', suiteNotImportable: false });
    expect(out.results).toBe(RESULTS);
    // the stale file of an earlier run in the image is gone: one results file, this run's
    expect(
      parseFramedOutput(stdout)
        .files.filter((f) => f.kind === 'results')
        .map((f) => f.name),
    ).toEqual([`${head.slice(0, 8)}-existing-py_usr_bin_python3.json`]);
    expect(parseResultsFile(out.results!, 'x').benchmarks).toHaveLength(32);
    expect(out.log).toContain('· Running 32 total benchmarks');
    const argv = readFileSync(join(scratch, 'ok', 'argv.txt'), 'utf8')
      .trim()
      .split('\n');
    expect(argv[0]).toBe('machine --yes --machine perfmine --config asv.conf.json');
    expect(argv[1]).toBe(
      `run --python=same --set-commit-hash ${head} --record-samples --machine perfmine --no-pull --bench Text|Color -a rounds=2 --config asv.conf.json`,
    );
  });

  it('says so when asv cannot import the suite', async () => {
    const repo = await checkout('bad');
    const bin = fakeAsv(join(scratch, 'bad'), 'import-fails');
    const script = asvInvocationScript({ repoDir: repo, configPath: 'asv.conf.json', resultsDir: 'results' }, settings);
    const { stdout } = await run('bash', ['-c', script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}` } });
    const out = readInvocationOutput(stdout);
    expect(out).toMatchObject({ asvExitCode: 1, results: null, suiteNotImportable: true });
  });
});
