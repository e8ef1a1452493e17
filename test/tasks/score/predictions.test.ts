import { describe, expect, it } from 'vitest';
import { parsePredictions, PredictionsFileError } from '../../../tasks/score/predictions.js';

const known = new Set(['o__r-1', 'o__r-2', 'o__r-3']);
const line = (o: unknown) => JSON.stringify(o);
const pred = (id: string, patch = 'diff --git a/x b/x\n', model = 'm') => ({
  instance_id: id,
  model_name_or_path: model,
  model_patch: patch,
});

describe('parsePredictions', () => {
  it('reads JSON Lines and JSON arrays alike', () => {
    const rows = [pred('o__r-1'), pred('o__r-2', '', 'n')];
    const a = parsePredictions(rows.map(line).join('\n') + '\n', known);
    const b = parsePredictions(JSON.stringify(rows, null, 2), known);
    expect(a).toEqual(b);
    expect(a.rejected).toEqual([]);
    expect(a.predictions).toEqual([
      { row: 1, instanceId: 'o__r-1', model: 'm', patch: 'diff --git a/x b/x\n' },
      { row: 2, instanceId: 'o__r-2', model: 'n', patch: '' },
    ]);
  });

  it('names each bad row and keeps the others', () => {
    const big = 'x'.repeat(50 * 1024 * 1024);
    const text = [
      line(pred('o__r-1')),
      line({ instance_id: 'o__r-2', model_name_or_path: 'm', patch: 'oops' }),
      line(pred('o__r-9')),
      line(pred('o__r-1', 'other')),
      '{not json',
      line(pred('o__r-3', big)),
      line(pred('o__r-2', '')),
      line({ instance_id: 'o__r-3', model_name_or_path: 7, model_patch: '' }),
    ].join('\n');
    const r = parsePredictions(text, known);
    expect(r.predictions.map((p) => [p.row, p.instanceId, p.patch.length])).toEqual([
      [1, 'o__r-1', 19],
      [7, 'o__r-2', 0],
    ]);
    expect(r.rejected.map((x) => [x.row, x.reason, x.instanceId])).toEqual([
      [2, 'invalid-prediction', 'o__r-2'],
      [3, 'unknown-instance', 'o__r-9'],
      [4, 'duplicate-prediction', 'o__r-1'],
      [5, 'invalid-json', null],
      [6, 'patch-too-large', 'o__r-3'],
      [8, 'invalid-prediction', 'o__r-3'],
    ]);
    expect(r.rejected[0]!.message).toContain('model_patch');
    expect(r.rejected[5]!.message).toContain('model_name_or_path');
    expect(r.rejected[4]!.message).toContain(String(50 * 1024 * 1024));
  });

  it('the same instance for two models is not a duplicate', () => {
    const r = parsePredictions([pred('o__r-1', 'a', 'm'), pred('o__r-1', 'a', 'n')].map(line).join('\n'), known);
    expect(r.predictions).toHaveLength(2);
  });

  it('a JSON array that does not parse is an error of the file', () => {
    expect(() => parsePredictions('[{"instance_id": ', known)).toThrow(PredictionsFileError);
  });
});
