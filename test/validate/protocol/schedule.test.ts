import { describe, expect, it } from 'vitest';
import { measurementSchedule, scheduleLetters } from '../../../stages/validate/protocol/schedule.js';
import { asvMachineCommand, asvRunCommand, resolveResultsDir } from '../../../stages/validate/protocol/asv-invocation.js';
import { shellJoin, shellQuote } from '../../../stages/validate/protocol/shell.js';
import { parseFramedOutput } from '../../../stages/validate/protocol/framed-output.js';

describe('the measurement schedule', () => {
  it('alternates A B B A A B … with base/base calibration pairs after the A/B pair of the same index', () => {
    expect(scheduleLetters(measurementSchedule(4, 0))).toBe('A B B A A B B A');
    expect(scheduleLetters(measurementSchedule(4, 2))).toBe('A B c c B A c c A B B A');
    expect(scheduleLetters(measurementSchedule(1, 3))).toBe('A B c c c c c c');
    expect(measurementSchedule(0, 0)).toEqual([]);
  });

  it('numbers invocations in time order and files each under its role, the layout perfmine compare reads', () => {
    const s = measurementSchedule(2, 1);
    expect(s.map((i) => [i.seq, i.role, i.pair, i.image, i.file])).toEqual([
      [1, 'base', 0, 'base', 'base/001.json'],
      [2, 'expert', 0, 'expert', 'expert/002.json'],
      [3, 'calibration-first', 0, 'base', 'calibration-first/003.json'],
      [4, 'calibration-second', 0, 'base', 'calibration-second/004.json'],
      [5, 'expert', 1, 'expert', 'expert/005.json'],
      [6, 'base', 1, 'base', 'base/006.json'],
    ]);
    expect(() => measurementSchedule(-1, 0)).toThrow(RangeError);
  });
});

describe('asv command lines', () => {
  const layout = {
    repoDir: '/workspace/repo',
    configPath: 'asv_bench/asv.conf.json',
    resultsDir: resolveResultsDir('asv_bench/asv.conf.json', undefined),
  };

  it('resolves asv results_dir against the config directory', () => {
    expect(layout.resultsDir).toBe('asv_bench/results');
    expect(resolveResultsDir('asv.conf.json', '.asv/results')).toBe('.asv/results');
    expect(resolveResultsDir('bench/asv.conf.json', '../out')).toBe('out');
  });

  it('registers a fixed machine name and runs on the same python with raw samples, labelled with the checkout', () => {
    expect(asvMachineCommand(layout, 'perfmine')).toEqual([
      'asv',
      'machine',
      '--yes',
      '--machine',
      'perfmine',
      '--config',
      'asv_bench/asv.conf.json',
    ]);
    const settings = { machine: 'perfmine', bench: 'groupby|join', rounds: 2, attributes: { repeat: 5, number: 1 }, cpuAffinity: '1' };
    expect(asvRunCommand(layout, settings, 'abc123')).toEqual([
      'asv',
      'run',
      '--python=same',
      '--set-commit-hash',
      'abc123',
      '--record-samples',
      '--machine',
      'perfmine',
      '--no-pull',
      '--bench',
      'groupby|join',
      '-a',
      'rounds=2',
      '-a',
      'number=1',
      '-a',
      'repeat=5',
      '--cpu-affinity',
      '1',
      '--config',
      'asv_bench/asv.conf.json',
    ]);
  });

  it('quotes shell words', () => {
    expect(shellQuote('plain-word_1.json')).toBe('plain-word_1.json');
    expect(shellQuote("it's (x)")).toBe(`'it'\\''s (x)'`);
    expect(shellJoin(['--bench', 'a|b'])).toBe(`--bench 'a|b'`);
  });

  it('reads framed stdout and ignores other lines', () => {
    const b64 = Buffer.from('{"a": 1}\nsecond line').toString('base64');
    const out = parseFramedOutput(`noise\n@@perfmine rc 2\n@@perfmine file results x.json ${b64}\n@@perfmine sha abc\n@@perfmine rc 0\n`);
    expect(out.values.get('rc')).toBe('0');
    expect(out.values.get('sha')).toBe('abc');
    expect(out.files).toEqual([{ kind: 'results', name: 'x.json', content: '{"a": 1}\nsecond line' }]);
  });
});
