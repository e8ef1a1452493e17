import type { PredictionResult } from './index.js';
import type { ModelAggregate } from './task-score.js';
import { textTable } from '../../pipeline/text-table.js';

/** The text output of `perfmine score`: one line per prediction, then the aggregate table by model. Pure. */

function num(x: number | null, digits = 3): string {
  return x === null ? '-' : x.toFixed(digits);
}

export function formatScoreRows(rows: readonly PredictionResult[]): string {
  return textTable(
    [
      'row',
      'instance_id',
      'model',
      'status',
      'reward',
      'agent',
      'expert',
      'advantage',
      'normalized',
      'measured',
      'judge',
      'failure / detail',
    ],
    rows.map((r) => [
      String(r.row),
      r.instance_id ?? '-',
      r.model_name_or_path ?? '-',
      r.status,
      num(r.reward),
      num(r.agent_speedup),
      num(r.expert_speedup),
      num(r.advantage),
      num(r.normalized_advantage),
      r.measured ? 'yes' : 'no',
      r.judge ? r.judge.verdict.toLowerCase() : r.judge_error ? 'error' : '-',
      r.failure === null
        ? ''
        : `${r.failure}: ${(r.regressed_tests.length > 0 ? r.regressed_tests.join(', ') : r.detail).split('\n')[0]!.slice(0, 120)}`,
    ]),
  ).join('\n');
}

export function formatAggregate(models: readonly ModelAggregate[]): string {
  return textTable(
    [
      'model',
      'tasks',
      'passed',
      'failed',
      'speedup',
      'expert',
      'advantage',
      'adv (module)',
      'adv (class)',
      'adv (function)',
      'normalized',
      'beat expert',
    ],
    models.map((m) => [
      m.model,
      String(m.tasks),
      String(m.passed),
      String(m.failed),
      num(m.meanAgentSpeedup),
      num(m.meanExpertSpeedup),
      num(m.meanAdvantage),
      num(m.meanModuleAdvantage),
      num(m.meanClassAdvantage),
      num(m.meanFunctionAdvantage),
      num(m.meanNormalizedAdvantage),
      String(m.beatExpert),
    ]),
  ).join('\n');
}
