/**
 * The reward of a perfmine task's verifier, as perfmine_verify.py computes it (REWARD_FORMULA there;
 * test/harbor/reward.test.ts keeps the two texts the same). Pure data.
 */
export const REWARD_FORMULA =
  "reward = -1 when the change fails a check (the working side does not build, a test that passes on the base fails, a benchmark returns another value or fails); otherwise reward = max(0, ln S_agent / ln S_expert), where S_agent is the geometric mean over the task's improved workloads (those the expert's patch made faster, by validate's verdict) of the agent's credited speedup, and S_expert the geometric mean of the expert's speedups validate measured on them. A credited speedup is the measured one (base time / working time) where the verdict is improved or worsened, and 1 where the measurement cannot tell it from no change; where less than half of the time the working side saves per batch, as its worker reports it, is seen from outside the worker (its CPU time by the kernel's count; the wall clock with the wall-clock protocol), the speedup seen from outside is credited instead, if lower. 0: no improvement (or slower); 1: as fast as the expert on the task's workloads; above 1: faster than the expert. advantage = S_agent - S_expert (FormulaCode's advantage over the task's workloads); speedup_all, expert_speedup_all and advantage_all: the same over every workload measured, each side credited by its own verdicts.";

/** The reward of a change that fails a check; of a change that makes nothing faster. */
export const FAILURE_REWARD = -1;
export const FLOOR_REWARD = 0;
