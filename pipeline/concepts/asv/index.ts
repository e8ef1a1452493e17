/**
 * asv results and statistics: parsing asv's files, asv's own statistical decision reproduced
 * exactly, `asv compare`'s verdicts and table, and FormulaCode's metrics.
 */
export { parseTolerantJson, TolerantJsonError, formatJsonPath, type JsonPath } from './tolerant-json.js';
export {
  parseResultsFile,
  parseAsvJson,
  combinationCount,
  RESULT_COLUMNS,
  RESULTS_SCHEMA_VERSION,
  type ResultColumn,
  type ResultStats,
  type BenchmarkResult,
  type ResultsFile,
} from './results.js';
export { parseBenchmarksFile, BENCHMARKS_SCHEMA_VERSION, type BenchmarkInfo, type BenchmarkType } from './benchmarks.js';
export {
  unrollResults,
  unrollBenchmark,
  cartesianProduct,
  workloadName,
  workloadHierarchy,
  hierarchyKey,
  type Workload,
  type WorkloadHierarchy,
  type HierarchyLevel,
} from './workloads.js';
export {
  mannWhitneyU,
  mannWhitneyCdf,
  mannWhitneyCounts,
  isDifferent,
  binomial,
  P_THRESHOLD,
  type MannWhitneyMethod,
  type MannWhitneyResult,
  type ConfidenceInterval,
} from './stats.js';
export { computeStats, quantile, quantileCi, binomPmf, interquartileError, minimumPValue, type SampleStats } from './compute-stats.js';
export { LaplacePosterior } from './laplace-posterior.js';
export {
  decideWorkload,
  isResultBetter,
  DEFAULT_FACTOR,
  DEFAULT_DECIDE_OPTIONS,
  MARKS,
  type Mark,
  type Change,
  type Section,
  type Measurement,
  type DecideOptions,
  type Verdict,
} from './compare.js';
export {
  resultSetOf,
  mergeSide,
  compareResultSets,
  compareCodePoints,
  type ResultSet,
  type CompareRow,
  type CompareReport,
  type CompareSidesOptions,
} from './result-set.js';
export { formatCompareReport, rowCells, isChanged, type FormatCompareOptions } from './format.js';
export { formatGithubTable } from './table.js';
export { humanValue, humanTime, humanFloat, humanFileSize } from './human-value.js';
export {
  speedup,
  workloadSpeedups,
  geometricMean,
  overallSpeedup,
  variance,
  commonWorkloads,
  advantage,
  stratifiedAdvantage,
  normalizedAdvantage,
  type Speedups,
  type StratumAdvantage,
  type StratifiedAdvantage,
} from './metrics.js';
export {
  readResultsFile,
  readBenchmarksFile,
  readResultsDirectory,
  loadSide,
  invocationStart,
  orderInvocations,
  benchmarksFileCandidates,
  findBenchmarksFile,
} from './load.js';
export { splitAppendedSamples, poolInvocations } from './invocations.js';
