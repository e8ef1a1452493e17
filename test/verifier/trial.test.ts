import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseTrialOutput, TrialOutputError } from '../../pipeline/services/verifier/trial-output.js';
import { COLLECTED, NOT_APPLIED, STAGING, trialEntries, trialScript } from '../../pipeline/services/verifier/trial-script.js';

/**
 * A verifier's run as `perfmine score` and `perfmine replay` make it (pipeline/services/verifier):
 * the script keeps Harbor's order (the change as the agent, then the verifier's files arriving,
 * then test.sh as root), and its output is read as a verifier writes it, test.sh's provisional
 * failure included, anything else refused by name.
 */
describe("a verifier's run in a task's environment", () => {
  it("applies the change as the agent, then lets the verifier's files arrive, then runs test.sh as root", () => {
    const script = trialScript({ rounds: 4 });
    execFileSync('bash', ['-n'], { input: script });
    const at = (s: string) => script.indexOf(s);
    expect(at('runuser -u agent -- git -C /repo apply')).toBeGreaterThan(0);
    expect(at('runuser -u agent')).toBeLessThan(at(`cp -a ${STAGING}/tests/. /tests/`));
    expect(at(`cp -a ${STAGING}/tests/. /tests/`)).toBeLessThan(at('bash /tests/test.sh'));
    expect(script).toContain(`exit ${NOT_APPLIED}`);
    expect(script).toContain('PERFMINE_VERIFY_ROUNDS=4');
    expect(COLLECTED).toContain('/logs/verifier/reward.json');
  });

  it("stages the change and the verifier's files root's alone, modes kept (the expert's patch 0600)", () => {
    const entries = trialEntries(
      new Map([
        ['test.sh', { content: '#!/bin/sh\n', mode: 0o755 }],
        ['perfmine/expert.patch', { content: 'diff\n', mode: 0o600 }],
      ]),
      'diff --git a/x b/x\n',
    );
    expect(entries.map((e) => [e.name, e.mode])).toEqual([
      ['var/tmp/perfmine-trial/change.patch', 0o600],
      ['var/tmp/perfmine-trial/tests/test.sh', 0o755],
      ['var/tmp/perfmine-trial/tests/perfmine/expert.patch', 0o600],
    ]);
  });

  const files = (o: Record<string, string>) => new Map(Object.entries(o).map(([k, v]) => [`verifier/${k}`, Buffer.from(v)]));

  it("reads the verdict; test.sh's provisional failure when the verifier wrote no details", () => {
    const killed = parseTrialOutput(files({ 'reward.json': '{"reward": -1, "correct": 0, "verifier_error": 1}', 'test-stdout.txt': 'x' }));
    expect(killed).toMatchObject({ reward: { reward: -1, verifier_error: 1 }, details: null });
    const full = parseTrialOutput(
      files({
        'reward.json': '{"reward": 0.5, "correct": 1}',
        'perfmine-verify.json': JSON.stringify({
          tool: 'perfmine-verify',
          schema: 2,
          failure: null,
          findings: [{ rule: 'memo', severity: 'suspect', path: 'a.py', line: 3, message: 'm' }],
          workloads: [{ name: 'w', task_improved: true, speedup: 1.2, verdict: 'improved' }],
        }),
        'agent.patch': 'diff',
      }),
    );
    expect(full.details!.workloads[0]).toMatchObject({ name: 'w', speedup: 1.2 });
    expect(full.agentPatch).toBe('diff');
  });

  it('refuses, by name, a reward that is not a flat object of numbers, a missing one, details of another shape', () => {
    expect(() => parseTrialOutput(files({}))).toThrow(TrialOutputError);
    expect(() => parseTrialOutput(files({ 'reward.json': '{"reward": "100"}' }))).toThrow(/flat object of numbers/);
    expect(() => parseTrialOutput(files({ 'reward.json': '{"reward": 1}', 'perfmine-verify.json': '{"tool": "x"}' }))).toThrow(
      /perfmine-verify\.json: tool/,
    );
  });
});
