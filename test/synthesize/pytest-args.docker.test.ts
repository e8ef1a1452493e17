import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BuildScripts } from '../../cache/build-scripts.js';
import { runStage } from '../../pipeline/runner.js';
import { synthesizeStage } from '../../stages/synthesize/index.js';
import { gitScope, oneCandidateSuite, testConfig, testContext } from './harness.js';

/**
 * A repository whose pytest configuration names a plugin's option that no environment here has
 * (xarray's `addopts` names pytest-mypy-plugins' options, which Debian does not package):
 * verification's collection fails on the base image, and passes once the repository's own
 * `repositories."owner/name".pytestArgs` clear `addopts`, with no change to the build script.
 */
const REPO = 'fixture/addopts';
const suite = oneCandidateSuite('pytest-args', REPO, { 'pytest.ini': '[pytest]\naddopts = --mypy-only-local-stub\n' });

describe("a repository's own pytest arguments reach verification's collection (real Docker engine)", () => {
  it('fails collection without them, naming the option, and verifies the same script with them', async () => {
    const { db, docker, dir, log, lines, fixture } = suite;
    const base = testConfig(join(dir, 'perfmine.db'), { llm: { mode: 'none' } });
    const without = await runStage(testContext({ db, config: base, docker, log }), synthesizeStage, gitScope(fixture.path));
    expect(without).toMatchObject({ ran: 1, dropped: { 'no-verified-script': 1 } });
    const failed = new BuildScripts(db).forCommit(REPO, fixture.commits[0]!.sha);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((a) => a.outcome !== 'verified' && a.failingStep === 'pytest')).toBe(true);
    expect(`${failed.at(-1)!.failure} ${failed.at(-1)!.stderrTail} ${failed.at(-1)!.stdoutTail}`).toMatch(
      /unrecognized arguments: --mypy-only-local-stub/,
    );

    const config = testConfig(join(dir, 'perfmine.db'), {
      llm: { mode: 'none' },
      repositories: { [REPO]: { pytestArgs: ['-o', 'addopts='] } },
    });
    const report = await runStage(testContext({ db, config, docker, log }), synthesizeStage, gitScope(fixture.path));
    if (report.done !== 1) console.log(lines.join('').slice(-6000));
    expect(report).toMatchObject({ ran: 1, done: 1 });
    const verified = new BuildScripts(db).forCommit(REPO, fixture.commits[0]!.sha).filter((a) => a.outcome === 'verified');
    expect(verified).toHaveLength(1);
    // the same template script as the failed attempts: only collection's arguments changed
    expect(failed.map((a) => a.script)).toContain(verified[0]!.script);
  }, 900_000);
});
