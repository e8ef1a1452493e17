import { describe, expect, it } from 'vitest';
import { formatMetrics, formatReports } from '../../pipeline/summary.js';

describe('run summary', () => {
  it('prints per stage items in, reused, ran, done, dropped and failed with reasons', () => {
    const text = formatReports([
      {
        stage: 'filter',
        planned: 10,
        reused: 4,
        ran: 6,
        wouldRun: 0,
        notStarted: 0,
        done: 3,
        dropped: { 'negative-message': 5, 'no-asv-config': 1 },
        failed: { bug: 1 },
        failedKinds: { internal: 1 },
        durationMs: 5,
      },
    ]);
    expect(text.split('\n')[1]).toMatch(/^filter\s+10\s+4\s+6\s+3\s+6\s+1$/);
    expect(text).toMatch(/dropped: negative-message 5, no-asv-config 1/);
    expect(text).toMatch(/failed: {2}bug 1/);
  });

  it('prints LLM tokens and cost, GitHub requests and rate limit, Docker time, tasks; skips what did not happen', () => {
    expect(formatMetrics({})).toBe('');
    const text = formatMetrics({
      'llm.requests': 12,
      'llm.cacheHits': 30,
      'llm.promptTokens': 45000,
      'llm.completionTokens': 3100,
      'llm.costUsd': 0.02346,
      'github.requests': 340,
      'github.conditional': 300,
      'github.notModified': 290,
      'github.rateRemaining': 4660,
      'docker.builds': 4,
      'docker.buildMs': 312000,
      'docker.measureMs': 540000,
      'emit.tasks': 2,
    });
    expect(text.split('\n')).toEqual([
      'LLM: 12 requests, 30 answers from the cache; 45,000 prompt + 3,100 completion tokens; $0.0235',
      'GitHub: 340 requests, 300 conditional, 290 answered 304 (free); rate limit left 4,660',
      'Docker: 4 builds in 312 s; measuring 540 s',
      'tasks emitted: 2',
    ]);
  });
});
