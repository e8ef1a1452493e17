import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';
import { REWARD_ROUNDS } from '../../pipeline/services/verifier/verifier-folder.js';

/**
 * perfmine_bench_interleave.py's `extend` (the verifier's reward rounds): after the protocol's
 * rounds, more rounds of the named workloads only, on the named sides only, every side's worker
 * replaced between rounds as before. Driven with stand-in workers that answer each batch at once
 * and record what they were asked.
 */

const DIR = packagePath('python');

const DRIVER = `
import json, sys
sys.path.insert(0, ${JSON.stringify(DIR)})
import perfmine_bench_interleave as il

asked = []

class Worker:
    def __init__(self, side):
        self.side = side
        self.dead = None
        self.start = {"event": "ready", "workloads": [
            {"name": "fast", "benchmark": "b.time_fast", "param": None},
            {"name": "other", "benchmark": "b.time_other", "param": None}],
            "benchmarks": {"b.time_fast": {"version": "1"}, "b.time_other": {"version": "1"}}}
    def batch(self, command):
        asked.append((self.side, command["benchmark"], command["samples"]))
        return {"ok": True, "samples": [0.001] * command["samples"], "number": 10}
    def send_restart(self, benchmarks=None):
        asked.append((self.side, "restart", benchmarks))
        return 1
    def await_restart(self, ident):
        return {"ok": True}
    def cpu_seconds(self):
        return 0.0
    def log(self):
        return ""
    def close(self):
        pass

settings = {"rounds": 3, "roundsPerProcess": 1, "samples": 2, "calibration": True, "seed": 7, "budgetSeconds": 600,
            "batchTimeoutSeconds": 60, "clock": "cpu", "warmupSeconds": 0.0, "looks": [], "reference": True,
            "extend": json.loads(sys.argv[1])}
m = il.measure_interleaved(Worker, settings)
out = {"rounds": m["rounds"], "order": m["order"], "workloads": {}}
for w in m["workloads"]:
    out["workloads"][w["ref"]["name"]] = {side: [r is not None for r in w[side]["rounds"]]
                                          for side in ("base", "expert", "calibration", "reference")}
out["restarts"] = sorted(set(s for s, what, _ in asked if what == "restart"))
out["restarted_after_protocol"] = sorted(set(s for s, what, _ in asked[-12:] if what == "restart"))
out["restarts_named"] = [[s, names] for s, what, names in asked if what == "restart"]
print(json.dumps(out))
`;

interface Driven {
  rounds: number;
  order: string[];
  workloads: Record<string, Record<string, boolean[]>>;
  restarted_after_protocol: string[];
  restarts_named: [string, string[] | null][];
}

const drive = (extend: unknown): Driven =>
  JSON.parse(execFileSync('python3', ['-c', DRIVER, JSON.stringify(extend)], { encoding: 'utf8' })) as Driven;

describe("the interleaved driver's reward rounds (extend)", () => {
  it('measures the named workloads on the named sides in the rounds after the protocol, and nothing else there', () => {
    const d = drive({ rounds: 6, workloads: ['fast'], sides: ['base', 'expert', 'reference'] });
    expect(d.rounds).toBe(6);
    const yes = (n: number) => Array.from({ length: 6 }, (_, r) => r < n);
    expect(d.workloads['fast']).toEqual({ base: yes(6), expert: yes(6), calibration: yes(3), reference: yes(6) });
    expect(d.workloads['other']).toEqual({ base: yes(3), expert: yes(3), calibration: yes(3), reference: yes(3) });
    // the rounds after the protocol visit workload 0 (fast) only, on A (base), B (working) and D (reference)
    for (const step of d.order.slice(3)) expect(step).toMatch(/^0:[ABD]{3}$/);
    expect(d.order.slice(0, 3).every((step) => step.split(' ').length === 2)).toBe(true);
    // the calibration's worker is not started again for rounds it takes no part in
    expect(d.restarted_after_protocol).not.toContain('calibration');
    // a fresh worker imports only the modules of what it still measures: both benchmarks in the
    // protocol's rounds, the extended one alone after them
    const named = d.restarts_named.map(([side, names]) => `${side}:${(names ?? ['(all)']).join(',')}`);
    expect(named.slice(0, 2 * 4)).toEqual(
      expect.arrayContaining(['base:b.time_fast,b.time_other', 'expert:b.time_fast,b.time_other', 'calibration:b.time_fast,b.time_other']),
    );
    expect(named.filter((n) => n.endsWith(':b.time_fast')).length).toBeGreaterThan(0);
    const afterProtocol = d.restarts_named.slice(-9);
    for (const [, names] of afterProtocol) expect(names).toEqual(['b.time_fast']);
  });

  it('without extend, or with no more rounds than the protocol, measures the protocol only', () => {
    expect(drive(null).rounds).toBe(3);
    expect(drive({ rounds: 3, workloads: ['fast'], sides: ['base', 'expert'] }).rounds).toBe(3);
  });

  it("the verifier's REWARD_ROUNDS is the one the export's time limits count", () => {
    const py = execFileSync(
      'python3',
      ['-c', `import sys; sys.path.insert(0, ${JSON.stringify(DIR)}); import perfmine_verify as v; print(v.REWARD_ROUNDS)`],
      {
        encoding: 'utf8',
      },
    );
    expect(Number(py)).toBe(REWARD_ROUNDS);
  });
});
