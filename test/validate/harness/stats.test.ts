import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { computeStats, parseTolerantJson } from '../../../pipeline/concepts/asv/index.js';
import { HARNESS_SCRIPT } from '../../../pipeline/services/environments/harness-files.js';
import { REFERENCE_DIR } from '../../concepts/asv/reference.js';
import { ROOT, runProgram } from './harness-fixture.js';

/** The harness's compute_stats (a Python port of asv_runner's) on asv's 400 reference cases. */
const SCRIPT = `
import json, math, sys
sys.path.insert(0, sys.argv[1])
import perfmine_harness as h
vectors = json.load(open(sys.argv[2]))

def num(v):
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v

out = []
for case in vectors["cases"]:
    for side in ("a", "b"):
        xs = [x for x in map(num, case[side]) if not math.isnan(x)]
        median, stats = h.compute_stats(xs, 1)
        expected = case["stats_" + side]
        out.append({
            "samples": xs,
            "median": [median, case["median_" + side]],
            "ci_99_a": [stats["ci_99_a"], num(expected["ci_99_a"])],
            "ci_99_b": [stats["ci_99_b"], num(expected["ci_99_b"])],
            "q_25": [stats["q_25"], expected["q_25"]],
            "q_75": [stats["q_75"], expected["q_75"]],
            "repeat": [stats["repeat"], expected["repeat"]],
        })
print(json.dumps(out))
`;

type Pair = [number, number];
interface Row {
  samples: number[];
  median: Pair;
  ci_99_a: Pair;
  ci_99_b: Pair;
  q_25: Pair;
  q_75: Pair;
  repeat: Pair;
}

describe("the harness's statistics", () => {
  it("reproduce asv's compute_stats exactly on its 400 reference cases (800 sample sets), Laplace fallback included", async () => {
    const r = await runProgram('python3', ['-c', SCRIPT, dirname(HARNESS_SCRIPT), `${REFERENCE_DIR}asv-stats/vectors.json`], ROOT);
    expect(r.code, r.stderr).toBe(0);
    const rows = parseTolerantJson(r.stdout) as Row[]; // single samples have infinite bounds
    expect(rows).toHaveLength(800);
    const mismatches = rows.flatMap((row, i) =>
      (['median', 'ci_99_a', 'ci_99_b', 'q_25', 'q_75', 'repeat'] as const)
        .filter((k) => row[k][0] !== row[k][1])
        .map((k) => `${i}.${k}: ${row[k][0]} vs ${row[k][1]}`),
    );
    expect(mismatches).toEqual([]);
    // the small samples whose interval comes from the Laplace posterior are among them
    const extended = rows.filter((row) => row.ci_99_a[0] < Math.min(...row.samples) || row.ci_99_b[0] > Math.max(...row.samples));
    expect(extended.length).toBeGreaterThan(20);
    // and the project's TypeScript port agrees with the Python one
    for (const row of rows) {
      const ts = computeStats(row.samples, 1)!;
      expect(ts.result).toBe(row.median[0]);
      for (const [mine, theirs] of [
        [ts.stats.ciLower, row.ci_99_a[0]],
        [ts.stats.ciUpper, row.ci_99_b[0]],
      ] as const) {
        if (mine !== theirs) expect(Math.abs(mine - theirs)).toBeLessThanOrEqual(1e-12 * Math.abs(theirs));
      }
    }
  });
});
