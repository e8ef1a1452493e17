import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';

/**
 * perfmine-bench compare's protocol (perfmine_bench.resolve_protocol): validate's defaults for its
 * harness (sample by sample, rounds planned by cost, the calibration in the first 10 rounds, 600 s),
 * a task's protocol recorded before a setting read as what it was measured with (batch, even,
 * every round), bad values refused with exit 2; and the driver closing the calibration worker after
 * its rounds (its log's tail kept). The schedule itself is test/python/interleave-parity.test.ts's.
 */

const DIR = packagePath('python');

const RESOLVE = `
import argparse, json, sys
sys.path.insert(0, ${JSON.stringify(DIR)})
import perfmine_bench as bench
bench.say = lambda *a, **k: None
args = argparse.Namespace(rounds=None, samples=None, rounds_per_process=None, clock=None, seed=1, cpus=None, budget=None)
try:
    p = bench.resolve_protocol({"protocol": json.loads(sys.argv[1])}, args)
except bench.BenchError as exc:
    print(json.dumps({"error": exc.code, "message": str(exc)}))
else:
    print(json.dumps({k: p[k] for k in ("interleave", "plan", "calibrationRounds", "samplesPerRound", "timeBudgetSeconds", "rounds")}))
`;

const resolve = (protocol: unknown): Record<string, unknown> =>
  JSON.parse(execFileSync('python3', ['-c', RESOLVE, JSON.stringify(protocol)], { encoding: 'utf8' })) as Record<string, unknown>;

describe("perfmine-bench compare's protocol", () => {
  it("takes validate's defaults for its harness", () => {
    expect(resolve({})).toEqual({
      interleave: 'sample',
      plan: 'cost',
      calibrationRounds: 10,
      samplesPerRound: 'by-setup',
      timeBudgetSeconds: 600,
      rounds: 20,
    });
  });

  it('reads a protocol recorded before interleave, plan and calibrationRounds as what it was measured with', () => {
    expect(resolve({ rounds: 6 })).toEqual({
      interleave: 'batch',
      plan: 'even',
      calibrationRounds: null,
      samplesPerRound: 'fixed',
      timeBudgetSeconds: 600,
      rounds: 6,
    });
    expect(resolve({ rounds: 6, interleave: 'sample' })).toMatchObject({ interleave: 'sample', plan: 'even', calibrationRounds: null });
    expect(resolve({ rounds: 12, interleave: 'sample', plan: 'cost', calibrationRounds: 4 })).toMatchObject({
      interleave: 'sample',
      plan: 'cost',
      calibrationRounds: 4,
    });
    // validate records null for every round
    expect(resolve({ rounds: 12, interleave: 'sample', plan: 'cost', calibrationRounds: null })).toMatchObject({ calibrationRounds: null });
  });

  it('refuses a plan or calibration rounds it does not know, with exit 2', () => {
    for (const bad of [
      { plan: 'fast' },
      { calibrationRounds: 2 },
      { calibrationRounds: 3.5 },
      { calibrationRounds: true },
      { calibrationRounds: '10' },
      { samplesPerRound: 'some' },
    ]) {
      const answer = resolve({ rounds: 6, ...bad });
      expect(answer['error'], JSON.stringify(bad)).toBe(2);
      expect(answer['message'], JSON.stringify(bad)).toMatch(/plan|calibrationRounds|samplesPerRound/);
    }
    expect(resolve({ rounds: 6, calibrationRounds: 3 })).toMatchObject({ calibrationRounds: 3 });
  });

  it('names the settings and the default budget in its help', () => {
    const help = spawnSync('python3', [packagePath('python', 'perfmine_bench.py'), 'compare', '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('default 600 s');
    expect(help.stdout).not.toContain('4 h');
  });
});

const CLOSING = `
import json, sys
sys.path.insert(0, ${JSON.stringify(DIR)})
import perfmine_bench_interleave as il

events = []

class Worker:
    def __init__(self, side):
        self.side = side
        self.dead = None
        self.start = {"event": "ready", "workloads": [{"name": "a", "benchmark": "b.time_a", "param": None}],
                      "benchmarks": {"b.time_a": {"version": "1"}}}
    def batch(self, command):
        events.append([self.side, "batch"])
        return {"ok": True, "samples": [0.001] * command["samples"], "number": 10}
    def send_restart(self, benchmarks=None):
        events.append([self.side, "restart"])
        return 1
    def await_restart(self, ident):
        return {"ok": True}
    def cpu_seconds(self):
        return None
    def log(self):
        return self.side + "'s stderr"
    def close(self):
        events.append([self.side, "close"])

settings = {"rounds": 5, "roundsPerProcess": 1, "samples": 2, "calibration": True, "seed": 7, "budgetSeconds": 600,
            "batchTimeoutSeconds": 60, "clock": "cpu", "warmupSeconds": 0.0, "looks": [], "interleave": "sample",
            "plan": "cost", "calibrationRounds": 2}
m = il.measure_interleaved(Worker, settings)
print(json.dumps({"events": events, "logs": m["logs"], "calibrationRounds": m["calibrationRounds"],
                  "calibration": [r is not None for r in m["workloads"][0]["calibration"]["rounds"]]}))
`;

describe("the driver's calibration rounds", () => {
  it('closes the calibration worker once after its rounds, restarts it no more, and keeps its log', () => {
    const out = JSON.parse(execFileSync('python3', ['-c', CLOSING], { encoding: 'utf8' })) as {
      events: [string, string][];
      logs: Record<string, string>;
      calibrationRounds: number;
      calibration: boolean[];
    };
    const calibration = out.events.filter(([side]) => side === 'calibration').map(([, what]) => what);
    // the warm-up batch, a batch a turn in rounds 1-2 (2 samples) with one restart between, then closed
    expect(calibration).toEqual(['batch', 'batch', 'batch', 'restart', 'batch', 'batch', 'close']);
    expect(out.events.filter(([side, what]) => side === 'base' && what === 'close')).toHaveLength(1);
    expect(out.logs).toEqual({ base: "base's stderr", expert: "expert's stderr", calibration: "calibration's stderr" });
    expect(out.calibrationRounds).toBe(2);
    expect(out.calibration).toEqual([true, true, false, false, false]);
  });
});
