/**
 * Counters and gauges of one run (LLM tokens and cost, GitHub requests and rate limit, Docker
 * time, ...), kept in memory and written into the run's summary. Names are dotted: `llm.calls`.
 */
export class Metrics {
  readonly #counters = new Map<string, number>();
  readonly #gauges = new Map<string, number>();

  add(name: string, amount = 1): void {
    this.#counters.set(name, (this.#counters.get(name) ?? 0) + amount);
  }

  /** A gauge keeps the last value set (e.g. `github.rateRemaining`). */
  set(name: string, value: number): void {
    this.#gauges.set(name, value);
  }

  get(name: string): number {
    return this.#counters.get(name) ?? this.#gauges.get(name) ?? 0;
  }

  /** The counters alone (what a Slurm job adds to its coordinator's). */
  counters(): Record<string, number> {
    return Object.fromEntries(this.#counters);
  }

  snapshot(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, v] of [...this.#counters, ...this.#gauges].sort(([a], [b]) => a.localeCompare(b))) out[k] = v;
    return out;
  }
}
