import { describe, expect, it } from 'vitest';
import { interleaveCases, interleaveTs, planCases, planTs, pythonAnswers, type InterleaveAnswer, type PlanAnswer } from './parity.js';

/**
 * perfmine-bench's interleaved driver (python/perfmine_bench_interleave.py) against validate's
 * (stages/validate/harness/interleave.ts, mode `alternate`) with the same scripted workers and
 * clock: for every case the same batch commands to every side in the same order, the same
 * `workload:sides` order per round (mulberry32 draws), the same rounds, samples, failures
 * (status and round), settlements, batch count and budget stop. The cases, batch by batch and
 * sample by sample (interleave `sample`): seeds with 1 to 5 workloads and 1 to 7 rounds of 1 to 3
 * per process; failures of every side in the warm-up and part-way (sample by sample, on a round's
 * first and later turns); missing workloads; a worker that cannot import the suite or start
 * again; budgets; interim looks. The verifier's additions (reference, accounts, extend) are
 * Python's alone (test/verifier/interleave-extend.test.ts).
 */
describe("perfmine-bench's round plan is validate's", () => {
  it('answers every case as plan.ts does: the next round, its expected time, the water level', () => {
    const cases = planCases();
    const python = pythonAnswers<PlanAnswer>('plan', cases);
    for (const [i, c] of cases.entries()) expect(python[i], c.label).toEqual(planTs(c));
    // the cases reach both sides of every decision
    const answers = cases.map(planTs);
    expect(answers.some((a) => a.level === null)).toBe(true);
    expect(answers.some((a, i) => a.next.length < cases[i]!.workloads.length)).toBe(true);
    expect(answers.some((a, i) => a.level !== null && a.next.length === cases[i]!.workloads.length && cases[i]!.workloads.length > 1)).toBe(
      true,
    );
    const tie = cases.findIndex((c) => c.label === 'a tie at the level');
    expect(answers[tie]).toEqual({ next: ['a', 'b'], expected: 11, level: 40 });
    expect(answers[tie + 1]!.next).toEqual(['b']);
    expect(answers[cases.findIndex((c) => c.label === 'the level at a sorted cost')]).toEqual({
      next: ['a', 'b'],
      expected: 45,
      level: 20,
    });
    expect(answers[cases.findIndex((c) => c.label === 'no rounds left, a budget already passed')]!.next).toEqual(['a', 'b']);
  });
});

describe("perfmine-bench's interleaved schedule is validate's", () => {
  it('runs every case as the TypeScript driver does', async () => {
    const cases = interleaveCases();
    const python = pythonAnswers<InterleaveAnswer>('interleave', cases);
    for (const [i, c] of cases.entries()) expect(python[i], c.label).toEqual(await interleaveTs(c));
    // the cases reach every way a measurement ends, batch by batch and sample by sample
    for (const bySample of [false, true]) {
      const these = cases.filter((c) => (c.settings.interleave === 'sample') === bySample);
      expect(these.length).toBeGreaterThan(20);
      const ts = await Promise.all(these.map(interleaveTs));
      expect(ts.some((a) => a.budgetExhausted)).toBe(true);
      expect(ts.some((a) => a.rounds === 0)).toBe(true);
      expect(ts.some((a) => a.workloads.some((w) => w.settled !== null))).toBe(true);
      const statuses = new Set(
        ts.flatMap((a) => a.workloads.flatMap((w) => [w.base, w.expert, w.calibration].map((s) => s?.failure?.status))),
      );
      for (const s of ['failed', 'timeout', 'crashed', 'skipped', 'missing']) expect(statuses.has(s), s).toBe(true);
      for (const side of ['base', 'expert', 'calibration'] as const) {
        const failedPartWay = ts.some((a) => a.workloads.some((w) => w[side] !== null && (w[side].failure?.round ?? null) !== null));
        expect(failedPartWay, `${side} fails part-way`).toBe(true);
      }
    }
  });

  it('sample by sample, the sides take turns one-sample batch by one-sample batch', async () => {
    const cases = interleaveCases().filter((c) => c.settings.interleave === 'sample');
    for (const c of cases) {
      const a = await interleaveTs(c);
      const { samples, warmupSeconds } = c.settings;
      // a single-value workload keeps batch turns (a batch of `samples`, its one value)
      const single = new Set(c.singleValue ?? []);
      const singleIndex = new Set(c.workloads.flatMap((name, i) => (single.has(name) ? [String(i)] : [])));
      // every round's batch has one sample; the warm-up seconds before a round's first turn only
      for (const commands of Object.values(a.asked))
        for (const command of commands.filter((x) => x.warmup !== null)) {
          if (single.has(command.benchmark.slice('bench.'.length))) {
            expect([command.samples, command.warmup], c.label).toEqual([samples, warmupSeconds]);
            continue;
          }
          expect(command.samples, c.label).toBe(1);
          expect([0, warmupSeconds], c.label).toContain(command.warmup);
        }
      // a round's step is `index:` and its turns' letters, one turn a sample
      for (const step of a.order.flatMap((round) => round.split(' ').filter((x) => x !== ''))) {
        const [index, letters] = step.split(':') as [string, string];
        const turns = letters.split('/');
        expect(turns.length, `${c.label}: ${step}`).toBeGreaterThanOrEqual(1);
        expect(turns.length, `${c.label}: ${step}`).toBeLessThanOrEqual(singleIndex.has(index) ? 1 : samples);
        for (const t of turns) expect(t, c.label).toMatch(/^(?:[ABC]{2,3})$/);
      }
      // a side's round holds all its turns' samples, or nothing (a round it did not finish); in the
      // round the workload stopped in (the base or the working side failed), those turns that ran
      // (samples by setup: the protocol's in the workload's first round, its own after)
      for (const w of a.workloads.filter((x) => !single.has(x.name))) {
        const stopped = [w.base.failure?.round, w.expert.failure?.round];
        const sides = [w.base, w.expert, w.calibration].flatMap((s) => (s ? [s] : []));
        const first = Math.min(
          ...sides.map((s) => s.rounds.findIndex((round) => round !== null)).filter((i) => i >= 0),
          ...stopped.filter((r): r is number => typeof r === 'number'),
        );
        for (const side of [w.base, w.expert, w.calibration])
          for (const [r, round] of (side?.rounds ?? []).entries()) {
            if (round === null) continue;
            const n = r > first && w.samples !== null ? w.samples : samples;
            if (stopped.includes(r)) expect(round.length, c.label).toBeLessThanOrEqual(n);
            else expect(round.length, c.label).toBe(n);
          }
      }
    }
    const answers = await Promise.all(cases.map(interleaveTs));
    expect(answers.some((a) => a.order.some((round) => round.includes('/')))).toBe(true);
    // a turn after the first runs without warm-up seconds
    const warm = cases.findIndex((c) => c.settings.warmupSeconds > 0 && c.settings.samples > 1);
    expect(warm).toBeGreaterThanOrEqual(0);
    const warmups = new Set(Object.values(answers[warm]!.asked).flatMap((commands) => commands.map((x) => x.warmup)));
    expect([...warmups].sort()).toEqual([0, 0.25, null].sort());
    // a side that fails on a later turn loses that round, and the other sides keep theirs
    const later = cases.findIndex((c) => c.label === 'by sample: the working side fails on a later turn of the first round');
    const w = answers[later]!.workloads.find((x) => x.name === 'time_a')!;
    expect(w.expert.failure).toEqual({ status: 'failed', round: 0 });
    expect(w.expert.rounds[0]).toBeNull();
    expect(w.base.rounds[0]!.length).toBeGreaterThanOrEqual(1);
    expect(w.expert.rounds.slice(1).every((round) => round === null)).toBe(true);
    // the workload's step of that round: the turns that ran, the failing one last
    expect(answers[later]!.order[0]).toMatch(/(^| )0:[ABC]{3}\/[ABC]{3}( |$)/);
    for (const other of answers[later]!.workloads.filter((x) => x.name !== 'time_a'))
      expect(other.expert.rounds.every((round) => round?.length === cases[later]!.settings.samples)).toBe(true);
  });

  it("takes fewer samples a round where a workload's setup outweighs its sample (by setup), from its second round", async () => {
    const cases = interleaveCases().filter((c) => c.label.startsWith('by setup: '));
    const answers = await Promise.all(cases.map(interleaveTs));
    const of = (label: string) => answers[cases.findIndex((c) => c.label === `by setup: ${label}`)]!;
    const samples = (a: (typeof answers)[number]) => Object.fromEntries(a.workloads.map((w) => [w.name, w.samples]));
    // a sample of 1 s: no setup keeps 5, a setup of 2 s gives ceil(5 x 1/3) = 2, of 9 s one
    expect(samples(of('cheap, costly and dominant setups'))).toEqual({ time_a: 5, time_b: 2, time_c: 1 });
    const rounds = of('cheap, costly and dominant setups').workloads.find((w) => w.name === 'time_c')!.base.rounds;
    expect(rounds.map((r) => r?.length)).toEqual([5, 1, 1, 1, 1, 1]);
    expect(samples(of('a setup slightly over a sample'))).toEqual({ time_a: 3, time_b: 5, time_c: 5 });
    // the first turn's setup (a setup_cache's, paid once a process) is not a sample's
    expect(samples(of("two samples, the first turn's setup heavier (a setup_cache)"))).toEqual({ time_a: 2, time_b: 1, time_c: 1 });
    // batch by batch and fixed: nothing decided, every round the protocol's
    for (const label of ['batch by batch: no effect', 'fixed: no effect'])
      expect(Object.values(samples(of(label))).every((n) => n === null)).toBe(true);
    // one sample a round: the first turn tells (setup_cache and warm-up or not), and one it stays
    expect(samples(of('one sample a round already'))).toEqual({ time_a: 1, time_b: 1, time_c: 1 });
    // the plan by cost sees the cheaper rounds: the budget buys more of them than at 5 samples
    const costly = cases.find((c) => c.label === 'by setup: a plan by cost, a budget, two rounds a process')!;
    const fixed = await interleaveTs({ ...costly, settings: { ...costly.settings, samplesPerRound: 'fixed' } });
    const pairs = (a: (typeof answers)[number]) => a.workloads.map((w) => w.base.rounds.filter((r) => r !== null).length);
    const [bySetup, atFive] = [pairs(of('a plan by cost, a budget, two rounds a process')), pairs(fixed)];
    expect(bySetup.reduce((x, y) => x + y)).toBeGreaterThan(atFive.reduce((x, y) => x + y));
    for (const [i, n] of bySetup.entries()) expect(n).toBeGreaterThanOrEqual(atFive[i]!);
  });

  it('plans the rounds by cost: an expensive workload left out of rounds, then the budget stops', async () => {
    const cases = interleaveCases().filter((c) => c.settings.plan === 'cost');
    expect(cases.length).toBeGreaterThanOrEqual(10);
    const answers = await Promise.all(cases.map(interleaveTs));
    const leftOut = (a: InterleaveAnswer) => a.workloads.some((w) => w.leftOut > 0);
    for (const bySample of [false, true])
      expect(answers.some((a, i) => leftOut(a) && (cases[i]!.settings.interleave === 'sample') === bySample)).toBe(true);
    // left out, and later the budget stops the rounds
    expect(answers.some((a) => leftOut(a) && a.budgetExhausted)).toBe(true);
    // with looks
    expect(answers.some((a, i) => leftOut(a) && cases[i]!.settings.looks.length > 0)).toBe(true);
    // left out before the first look, where the minimum is the verdict's minPairs (validate's setting)
    expect(
      answers.some((a, i) => {
        const s = cases[i]!.settings;
        return (
          s.minRounds !== undefined &&
          a.workloads.some((w) => w.leftOut > 0 && w.base.rounds.filter((r) => r !== null).length < (s.looks[0] ?? 6))
        );
      }),
    ).toBe(true);
    for (const [i, a] of answers.entries()) {
      const c = cases[i]!;
      for (const w of a.workloads) {
        // a round it was left out of is a round without its batches; never before the plan's minimum
        const measured = w.base.rounds.filter((r) => r !== null).length;
        if (w.leftOut > 0 && w.base.failure === null && w.expert.failure === null && w.settled === null)
          expect(measured + w.leftOut, `${c.label}: ${w.name}`).toBe(a.rounds);
        if (w.leftOut > 0)
          expect(measured, `${c.label}: ${w.name}`).toBeGreaterThanOrEqual(
            Math.min(c.settings.rounds, c.settings.minRounds ?? c.settings.looks[0] ?? 6),
          );
      }
      // the expensive workloads are the ones left out (by setup, a round's cost is its samples' too)
      if (c.settings.samplesPerRound === 'by-setup') continue;
      const cheap = c.workloads.filter((n) => c.secondsPerBatchOf?.[n] === undefined);
      for (const w of a.workloads.filter((x) => cheap.includes(x.name))) expect(w.leftOut, `${c.label}: ${w.name}`).toBe(0);
    }
    // the even plan (absent or given) leaves nothing out
    for (const c of interleaveCases().filter((x) => x.settings.plan !== 'cost'))
      expect(
        (await interleaveTs(c)).workloads.every((w) => w.leftOut === 0),
        c.label,
      ).toBe(true);
  });

  it('bounds the calibration to its first rounds, batch by batch and sample by sample', async () => {
    const cases = interleaveCases().filter((c) => typeof c.settings.calibrationRounds === 'number');
    for (const bySample of [false, true]) {
      const these = cases.filter((c) => (c.settings.interleave === 'sample') === bySample);
      expect(these.length).toBeGreaterThanOrEqual(10);
      for (const rpp of [1, 2]) expect(these.some((c) => c.settings.roundsPerProcess === rpp)).toBe(true);
      const answers = await Promise.all(these.map(interleaveTs));
      let bounded = 0;
      for (const [i, a] of answers.entries()) {
        const bound = these[i]!.settings.calibrationRounds!;
        for (const w of a.workloads) {
          if (w.calibration === null) continue;
          // nothing past the bound; a calibration side with nulls after it while the others go on
          expect(
            w.calibration.rounds.slice(bound).every((r) => r === null),
            these[i]!.label,
          ).toBe(true);
          if (a.rounds > bound && w.calibration.failure === null && w.calibration.rounds.slice(0, bound).every((r) => r !== null))
            bounded += 1;
        }
        // past the bound the rounds are base and expert turns only
        for (const round of a.order.slice(bound)) expect(round, these[i]!.label).not.toContain('C');
      }
      expect(bounded).toBeGreaterThan(0);
      // a calibration failure before the bound, and one scripted past it that never happens
      const statuses = answers.flatMap((a) => a.workloads.map((w) => w.calibration?.failure ?? null)).filter((f) => f !== null);
      expect(statuses.some((f) => f.round !== null && f.round < 3)).toBe(true);
      const past = these.findIndex((c) => c.label.endsWith('a failure scripted past the bound never happens'));
      expect(answers[past]!.workloads.every((w) => w.calibration?.failure === null)).toBe(true);
    }
  });

  it('keeps batch turns for a single-value workload sample by sample', async () => {
    const cases = interleaveCases().filter((c) => (c.singleValue ?? []).length > 0 && c.settings.interleave === 'sample');
    expect(cases.length).toBeGreaterThanOrEqual(3);
    for (const c of cases) {
      const a = await interleaveTs(c);
      const single = new Set(c.workloads.flatMap((name, i) => ((c.singleValue ?? []).includes(name) ? [String(i)] : [])));
      const steps = a.order.flatMap((round) => round.split(' ').filter((x) => x !== ''));
      for (const step of steps) {
        const [index, letters] = step.split(':') as [string, string];
        if (single.has(index)) expect(letters, `${c.label}: ${step}`).toMatch(/^[ABC]{2,3}$/);
      }
      // an order step without '/' beside the one-sample turns of the others (more than one sample a round)
      expect(steps.some((x) => !x.includes('/'))).toBe(true);
      if (single.size < c.workloads.length) expect(steps.some((x) => x.includes('/'))).toBe(true);
    }
  });
});
