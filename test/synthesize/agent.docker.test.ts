import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BuildScripts } from '../../cache/build-scripts.js';
import { Ledger } from '../../cache/ledger.js';
import { openStore } from '../../cache/store.js';
import { runStage } from '../../pipeline/runner.js';
import { DockerService } from '../../pipeline/services/docker.js';
import { synthesizeStage } from '../../stages/synthesize/index.js';
import { ensureAsvFakeImage } from '../fakes/asv-image.js';
import { ScriptedLlm, type ScriptedRule } from '../fakes/scripted-llm.js';
import { buildPythonRepo, correctScript, type PythonRepo } from '../fixtures/python-repo.js';
import { gitScope, memoryLogger, seedCandidates, tempDir, testConfig, testContext, testLabel } from './harness.js';

const REPO = 'fixture/agent';
const label = testLabel('agent');
const docker = new DockerService({ runLabel: label });
const dir = tempDir('agent');
let fixture: PythonRepo;

/** A primary model that answers in markdown, and a fallback model that answers well. */
const CASCADE: readonly ScriptedRule[] = [
  {
    name: 'primary-fenced',
    when: (r) => r.model === 'scripted-primary',
    answer: () => ({ reasoning: 'here you go', script: `\`\`\`bash\n${correctScript('pyproject-c')}\`\`\`\n` }),
  },
  {
    name: 'fallback-correct',
    when: (r) => r.model === 'scripted-fallback' && r.inputs.failure_stage === 'script',
    answer: () => ({ reasoning: 'bare script this time', script: correctScript('pyproject-c') }),
  },
];

async function runWith(name: string, llm: ScriptedLlm, overrides: Record<string, unknown>) {
  const db = openStore(join(dir, `${name}.db`));
  seedCandidates(db, REPO, fixture.commits, [0]);
  const { log, lines } = memoryLogger('info');
  const config = testConfig(join(dir, `${name}.db`), overrides);
  const report = await runStage(testContext({ db, config, docker, llm, log }), synthesizeStage, gitScope(fixture.path));
  return { db, report, lines, attempts: new BuildScripts(db).forCommit(REPO, fixture.commits[0]!.sha) };
}

describe('the build agent: script checks, model cascade and token budget (real Docker engine)', () => {
  beforeAll(async () => {
    await ensureAsvFakeImage();
    // A commit the template cannot build (its C header must be generated first).
    fixture = buildPythonRepo({ dir: join(dir, 'repo'), eras: [{ era: 'pyproject-c', commits: 2 }] });
  }, 300_000);

  afterAll(async () => {
    await docker.removeLabelled(label);
    rmSync(dir, { recursive: true, force: true });
  }, 300_000);

  it('rejects fenced scripts without building them, feeds the rejection back, then falls back to the second model', async () => {
    const llm = new ScriptedLlm(CASCADE);
    const { db, report, attempts, lines } = await runWith('cascade', llm, {
      synthesize: { offline: true, buildNetwork: 'none', agent: { roundsPerModel: 2 }, timeouts: { build: 240 } },
    });
    if (report.done !== 1) console.log(lines.join(''));
    expect(report).toMatchObject({ done: 1 });
    expect(attempts.map((a) => `${a.source}:${a.outcome}:${a.failureKind ?? '-'}:${a.model ?? '-'}`)).toEqual([
      'template:failed:missing-header:-',
      'agent:rejected:invalid-script:scripted-primary',
      'agent:rejected:invalid-script:scripted-primary',
      'agent:verified:-:scripted-fallback',
    ]);
    expect(attempts[1]!.failure).toMatch(/markdown code fence/);
    expect(attempts[1]!.steps).toEqual([expect.objectContaining({ step: 'script', ok: false })]);
    // The second primary round was shown the rejection of the first.
    expect(llm.calls.map((c) => `${c.model}:${c.inputs.failure_stage}`)).toEqual([
      'scripted-primary:build',
      'scripted-primary:script',
      'scripted-fallback:script',
    ]);
    expect(llm.calls[1]!.inputs.failure_summary).toMatch(/^script\/invalid-script: .*markdown code fence/);
    expect(new Ledger(db).get('synthesize', `${REPO}@${fixture.commits[0]!.sha}`)).toMatchObject({
      status: 'done',
      output: { scriptSource: 'agent' },
    });
    db.close();
  }, 300_000);

  it('stops the agent when the token budget is spent, and records the commit as having no verified script', async () => {
    const llm = new ScriptedLlm(CASCADE);
    const { db, report, attempts } = await runWith('budget', llm, {
      synthesize: { offline: true, buildNetwork: 'none', agent: { tokenBudget: 200 }, timeouts: { build: 240 } },
    });
    expect(report).toMatchObject({ done: 0, dropped: { 'no-verified-script': 1 } });
    expect(llm.calls).toHaveLength(0);
    expect(attempts.map((a) => a.source)).toEqual(['template']);
    const row = new Ledger(db).get('synthesize', `${REPO}@${fixture.commits[0]!.sha}`);
    expect(row?.detail).toMatch(/1 attempt\(s\); last failure: build\/missing-header: .*agent stopped: token-budget-exceeded/);
    db.close();
  }, 300_000);

  it('leaves no perfmine container of this run behind', async () => {
    expect(await docker.containers(label)).toEqual([]);
  });
});
