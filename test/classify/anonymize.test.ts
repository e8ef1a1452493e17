import { describe, expect, it } from 'vitest';
import { Anonymizer, anonymize, splitCode } from '../../pipeline/concepts/anonymize.js';

describe('anonymize (outside code only)', () => {
  it('replaces handles consistently and e-mail addresses, in prose', () => {
    const anon = new Anonymizer();
    expect(anon.anonymize('Thanks @alice-b and @Bob! cc @alice-b, mail jane.doe+x@example.org.')).toBe(
      'Thanks @user1 and @user2! cc @user1, mail <email>.',
    );
    expect(anon.anonymize('@bob again, and the @numpy/maintainers team')).toBe('@user2 again, and the @user3 team');
  });

  it('leaves fenced and inline code byte for byte', () => {
    const text = [
      'Reported by @carol:',
      '```python',
      '@njit',
      'def f(x):  # ask @carol or carol@example.com',
      '    return x',
      '```',
      'Use `git log --author=dave@example.com` or ``@dave`` to see.',
      '~~~',
      '@eve',
      '~~~',
      'Bye @eve.',
    ].join('\n');
    expect(anonymize(text)).toBe(
      [
        'Reported by @user1:',
        '```python',
        '@njit',
        'def f(x):  # ask @carol or carol@example.com',
        '    return x',
        '```',
        'Use `git log --author=dave@example.com` or ``@dave`` to see.',
        '~~~',
        '@eve',
        '~~~',
        'Bye @user2.',
      ].join('\n'),
    );
  });

  it('keeps decorators, dotted names and addresses that are not handles', () => {
    expect(anonymize('Wrap it with @property or @numba.jit; see https://github.com/@frank and a@b')).toBe(
      'Wrap it with @property or @numba.jit; see https://github.com/@frank and a@b',
    );
  });

  it('an unclosed fence runs to the end; an unmatched backtick is prose', () => {
    expect(anonymize('x `@gina\n```\n@gina')).toBe('x `@user1\n```\n@gina');
    const segments = splitCode('a `b` c\n```\nd\n```\ne');
    expect(segments.map((s) => s.code)).toEqual([false, true, false, true, false]);
    expect(segments.map((s) => s.text).join('')).toBe('a `b` c\n```\nd\n```\ne');
  });
});
