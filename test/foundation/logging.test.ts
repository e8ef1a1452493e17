import { describe, expect, it } from 'vitest';
import { makeScrubber, prettyLine } from '../../pipeline/logging.js';
import { readCredentials, secretValues } from '../../pipeline/credentials.js';
import { memoryLogger } from '../helpers/index.js';

describe('structured logging', () => {
  const env = { GITHUB_TOKENS: 'ghp_firsttoken123, ghp_secondtoken456', OPENAI_API_KEY: 'sk-test-abcdef' };
  const secrets = secretValues(readCredentials(env));

  it('reads rotated tokens and keys from the environment only', () => {
    expect(readCredentials(env).githubTokens).toEqual(['ghp_firsttoken123', 'ghp_secondtoken456']);
    expect(readCredentials({ GITHUB_TOKEN: 'ghp_single' }).githubTokens).toEqual(['ghp_single']);
    expect(secrets).toEqual(['ghp_firsttoken123', 'ghp_secondtoken456', 'sk-test-abcdef']);
  });

  it('never writes a credential: by key and by value, anywhere in the line', () => {
    const { log, lines } = memoryLogger(secrets);
    log.info({ token: 'ghp_firsttoken123', headers: { authorization: 'token ghp_secondtoken456' } }, 'request');
    log.warn({ err: 'server said: bad key sk-test-abcdef' }, 'failed with sk-test-abcdef');
    log.child({ stage: 'collect', item: 'o/r#1' }).error({ nested: { deep: ['ghp_firsttoken123'] } }, 'x');
    const all = lines.join('');
    for (const s of secrets) expect(all).not.toContain(s);
    expect(all).toContain('[redacted]');
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(parsed[2]).toMatchObject({ stage: 'collect', item: 'o/r#1', level: 'error' });
  });

  it('scrubs JSON-escaped secrets too and leaves other text alone', () => {
    const scrub = makeScrubber(['a"b\\c-secret']);
    expect(scrub(JSON.stringify({ v: 'x a"b\\c-secret y' }))).toBe('{"v":"x [redacted] y"}');
    expect(makeScrubber([])('plain')).toBe('plain');
  });

  it('pretty lines carry time, level, stage and item', () => {
    const line = prettyLine('{"level":"info","time":"2025-05-01T10:20:30.000Z","stage":"collect","item":"o/r#2","msg":"done","n":3}');
    expect(line).toBe('10:20:30 INFO  collect o/r#2: done n=3\n');
  });
});
