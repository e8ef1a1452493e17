/**
 * The measurement schedule of one candidate: base (A) and expert (B) in alternating invocations,
 * A B B A A B …, so that drift hits both sides alike; pair p is invocations (2p, 2p+1) of the
 * A/B sequence, base first when p is even, expert first when p is odd. Base/base calibration
 * pairs (two invocations of the base image) are interleaved after the A/B pair of the same
 * index, so that calibration sees the same phases of the machine. Every invocation runs in a
 * fresh container and keeps its own results file. Pure.
 */

export type InvocationRole = 'base' | 'expert' | 'calibration-first' | 'calibration-second';

export interface PlannedInvocation {
  /** 1-based position in time order. */
  readonly seq: number;
  readonly role: InvocationRole;
  /** Which image runs it. */
  readonly image: 'base' | 'expert';
  /** 0-based index of the A/B or calibration pair it belongs to. */
  readonly pair: number;
  /** Where its results file is kept: `<role>/<seq>.json`, the layout `perfmine compare` reads. */
  readonly file: string;
}

export function measurementSchedule(pairs: number, calibrationPairs: number): PlannedInvocation[] {
  if (!Number.isInteger(pairs) || pairs < 0 || !Number.isInteger(calibrationPairs) || calibrationPairs < 0) {
    throw new RangeError(`pairs and calibration pairs must be non-negative integers, got ${pairs} and ${calibrationPairs}`);
  }
  const out: PlannedInvocation[] = [];
  const add = (role: InvocationRole, pair: number) => {
    const seq = out.length + 1;
    out.push({ seq, role, image: role === 'expert' ? 'expert' : 'base', pair, file: `${role}/${String(seq).padStart(3, '0')}.json` });
  };
  for (let p = 0; p < Math.max(pairs, calibrationPairs); p++) {
    if (p < pairs) {
      if (p % 2 === 0) {
        add('base', p);
        add('expert', p);
      } else {
        add('expert', p);
        add('base', p);
      }
    }
    if (p < calibrationPairs) {
      add('calibration-first', p);
      add('calibration-second', p);
    }
  }
  return out;
}

/** The A/B letters of a schedule (`A B B A c c …`), for logs and tests. */
export function scheduleLetters(schedule: readonly PlannedInvocation[]): string {
  return schedule.map((i) => (i.role === 'base' ? 'A' : i.role === 'expert' ? 'B' : 'c')).join(' ');
}
