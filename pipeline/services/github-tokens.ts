/**
 * Rotation of GitHub tokens (`GITHUB_TOKENS`): the pool keeps using one token per rate-limit
 * resource (`core`, `search`, `code_search`) until GitHub says it is exhausted, then moves on to
 * the next one that is not. Knows tokens by index only when it reports anything.
 */
export type RateResource = string;

interface Budget {
  remaining: number | null;
  /** Epoch milliseconds when the budget is refilled. */
  resetAt: number | null;
}

export interface RateObservation {
  readonly remaining: number | null;
  /** Epoch seconds (GitHub's `x-ratelimit-reset`). */
  readonly reset: number | null;
  readonly resource: RateResource | null;
}

/** The rate-limit resource a request counts against, from its path (GitHub confirms it in `x-ratelimit-resource`). */
export function resourceOfPath(pathname: string): RateResource {
  if (pathname.startsWith('/search/code')) return 'code_search';
  if (pathname.startsWith('/search/')) return 'search';
  if (pathname.startsWith('/graphql')) return 'graphql';
  return 'core';
}

export function readRateHeaders(headers: Headers): RateObservation {
  const num = (name: string) => {
    const v = headers.get(name);
    if (v === null || v.trim() === '') return null;
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  };
  return { remaining: num('x-ratelimit-remaining'), reset: num('x-ratelimit-reset'), resource: headers.get('x-ratelimit-resource') };
}

export class TokenPool {
  readonly #tokens: readonly string[];
  readonly #now: () => number;
  readonly #budgets = new Map<string, Budget>();
  readonly #current = new Map<RateResource, number>();

  constructor(tokens: readonly string[], now: () => number = Date.now) {
    this.#tokens = tokens;
    this.#now = now;
  }

  get size(): number {
    return this.#tokens.length;
  }

  token(index: number): string {
    const t = this.#tokens[index];
    if (t === undefined) throw new RangeError(`no token #${index}`);
    return t;
  }

  /**
   * The token to use for the next request against `resource`: the current one while it has
   * budget, else the next usable one, else (all exhausted) the one refilled first. -1 without tokens.
   */
  pick(resource: RateResource): number {
    if (this.#tokens.length === 0) return -1;
    const current = this.#current.get(resource) ?? 0;
    for (let step = 0; step < this.#tokens.length; step++) {
      const index = (current + step) % this.#tokens.length;
      if (this.usable(index, resource)) {
        this.#current.set(resource, index);
        return index;
      }
    }
    let best = current;
    let bestReset = Infinity;
    for (let i = 0; i < this.#tokens.length; i++) {
      const resetAt = this.#budget(i, resource).resetAt ?? 0;
      if (resetAt < bestReset) {
        best = i;
        bestReset = resetAt;
      }
    }
    return best;
  }

  /** Whether the token may have budget left for the resource. */
  usable(index: number, resource: RateResource): boolean {
    const b = this.#budget(index, resource);
    if (b.remaining === null || b.remaining > 0) return true;
    return b.resetAt !== null && b.resetAt <= this.#now();
  }

  /** Records what a response said about the token's budget. */
  observe(index: number, requested: RateResource, seen: RateObservation): void {
    if (index < 0) return;
    const b = this.#budget(index, seen.resource ?? requested);
    if (seen.remaining !== null) b.remaining = seen.remaining;
    if (seen.reset !== null) b.resetAt = seen.reset * 1000;
  }

  /** GitHub refused a request because the token's budget is spent. */
  exhaust(index: number, resource: RateResource, resetEpochSeconds: number | null): void {
    if (index < 0) return;
    const b = this.#budget(index, resource);
    b.remaining = 0;
    b.resetAt = resetEpochSeconds === null ? this.#now() + 60_000 : resetEpochSeconds * 1000;
  }

  /** Whether a token other than `index` is usable now for the resource. */
  hasAlternative(index: number, resource: RateResource): boolean {
    for (let i = 0; i < this.#tokens.length; i++) if (i !== index && this.usable(i, resource)) return true;
    return false;
  }

  #budget(index: number, resource: RateResource): Budget {
    const key = `${index}\u0000${resource}`;
    let b = this.#budgets.get(key);
    if (!b) {
      b = { remaining: null, resetAt: null };
      this.#budgets.set(key, b);
    }
    return b;
  }
}
