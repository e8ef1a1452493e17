/**
 * FormulaCode's 13 optimization categories (the taxonomy its classifier uses; the names are the
 * ones of its `OptimizationType`), plus `uncategorized` for a change that fits none. Each is
 * described in prompts/optimization-category.md.
 */
export const OPTIMIZATION_CATEGORIES = [
  'use_better_algorithm',
  'use_better_data_structure_and_layout',
  'use_lower_level_system',
  'accept_less_precise_solution',
  'use_parallelization',
  'remove_or_reduce_work',
  'cache_and_reuse',
  'do_it_earlier_batch_throttle',
  'scale_platform',
  'database_and_storage_tuning',
  'micro_optimizations',
  'io_and_latency_hiding',
  'use_higher_level_system',
] as const;

export const CATEGORY_CHOICES = [...OPTIMIZATION_CATEGORIES, 'uncategorized'] as const;
export type OptimizationCategory = (typeof CATEGORY_CHOICES)[number];

export const DIFFICULTIES = ['easy', 'medium', 'hard'] as const;
export type Difficulty = (typeof DIFFICULTIES)[number];
