import { describe, expect, it } from 'vitest';
import { configSchema, type Config, type ConfigInput } from '../../pipeline/config/schema.js';
import { hashOf } from '../../pipeline/hash.js';
import { classifyResultSettings } from '../../stages/classify/result-settings.js';
import { collectResultSettings } from '../../stages/collect/result-settings.js';
import { cloneResultSettings, discoverResultSettings } from '../../stages/discover/result-settings.js';
import { emitResultSettings } from '../../stages/emit/result-settings.js';
import { filterResultSettings } from '../../stages/filter/result-settings.js';
import { synthesizeResultSettings } from '../../stages/synthesize/result-settings.js';
import { validateResultSettings } from '../../stages/validate/result-settings.js';
import { withoutLoopbackPort } from '../../pipeline/services/environments/environment.js';

/**
 * Which settings re-run an item of each stage. Every leaf of the whole configuration is changed
 * in turn; the settings whose change moves the stage's input hash must be exactly the table's
 * (a table entry covers the leaves under it), so every other setting provably does not re-run it.
 * A new configuration key is checked the same way: it re-runs nothing until a stage lists it.
 */

const REPO = 'acme/fastlib';

/** A configuration with every optional key set, so that each one is a leaf that gets changed. */
function fullConfig(input: ConfigInput = {}): Config {
  return configSchema.parse({
    ...input,
    llm: { baseUrl: 'http://127.0.0.1:9/v1', fallbackModel: 'gpt-fallback', maxOutputTokens: 1000, ...input.llm },
    discover: { listFile: 'repos.txt', ...input.discover },
  });
}

/** Dotted paths of every leaf: primitives, null, arrays and empty objects (records such as `llm.prices`). */
function leaves(value: unknown, prefix = ''): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) return [prefix];
  return Object.entries(value).flatMap(([k, v]) => leaves(v, prefix ? `${prefix}.${k}` : k));
}

/** Enumerations get another member, so that a branch on them is taken; anything else another value. */
const OTHER_MEMBER: Record<string, Record<string, string>> = {
  'validate.engine': { perfmine: 'asv', asv: 'perfmine' },
  'llm.mode': { openai: 'none', none: 'openai' },
  'validate.selection': { coverage: 'all', all: 'coverage' },
  'emit.vendorWheels': { auto: 'never', never: 'always', always: 'auto' },
};

function changed(path: string, value: unknown): unknown {
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'string') return OTHER_MEMBER[path]?.[value] ?? `${value}-changed`;
  if (value === null) return 'changed';
  if (Array.isArray(value)) return [...(value as unknown[]), 'changed'];
  return { changed: 1 };
}

function withLeafChanged(config: Config, path: string): Config {
  const copy = structuredClone(config) as unknown as Record<string, unknown>;
  const keys = path.split('.');
  let at = copy;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  const last = keys.at(-1)!;
  at[last] = changed(path, at[last]);
  return copy as unknown as Config;
}

/** The leaves whose change moves the hash of `settings(config)`. */
function keysThatRerun(config: Config, settings: (config: Config) => unknown): string[] {
  const before = hashOf(settings(config));
  return leaves(config).filter((path) => hashOf(settings(withLeafChanged(config, path))) !== before);
}

/** The leaves under the table's entries; every entry must name at least one leaf. */
function expand(config: Config, table: readonly string[]): string[] {
  const all = leaves(config);
  for (const entry of table)
    expect(
      all.some((l) => l === entry || l.startsWith(`${entry}.`)),
      `${entry} is not a setting`,
    ).toBe(true);
  return all.filter((l) => table.some((entry) => l === entry || l.startsWith(`${entry}.`)));
}

interface Case {
  readonly name: string;
  readonly config: Config;
  readonly settings: (config: Config) => unknown;
  /** The settings that re-run an item; every other one must not. */
  readonly rerun: readonly string[];
  /** A few that must not, named for the reader (already implied by `rerun`). */
  readonly skip: readonly string[];
}

const VALIDATE_COMMON = [
  'validate.engine',
  'validate.python',
  'validate.env',
  'validate.bench',
  'validate.factor',
  'validate.pytestArgs',
  'validate.timeBudgetSeconds',
  'validate.invocationTimeoutSeconds',
  'validate.testTimeoutSeconds',
  'validate.snapshotTimeoutSeconds',
  'validate.snapshotCallSeconds',
  'validate.buildTimeoutSeconds',
  'docker.cpus',
  'docker.memoryMb',
  'docker.pidsLimit',
  'docker.diskMb',
  'synthesize.buildNetwork',
  'synthesize.index.upstream',
  'synthesize.index.cutoff',
  'synthesize.index.slackDays',
  'synthesize.index.missingUploadTime',
  'synthesize.timeouts.repoImage',
  'synthesize.timeouts.import',
  'synthesize.timeouts.asv',
  'synthesize.timeouts.pytest',
  'synthesize.timeouts.tamper',
];
const PAIRED_BUT_NORMALIZATION = [
  'minPairs',
  'consistency',
  'alpha',
  'thresholdFloor',
  'safetyFactor',
  'maxPriorDf',
  'minCalibrationPairs',
].map((k) => `validate.paired.${k}`);
const VALIDATE_SKIP = [
  'validate.keepExpertImages',
  'validate.networkRepos',
  'validate.machine',
  'docker.concurrency',
  'docker.diskCheckSeconds',
  'progressIntervalSeconds',
  'logLevel',
  'synthesize.tailChars',
];
const SYNTHESIZE_COMMON = [
  'docker.baseImage',
  'synthesize.offline',
  'synthesize.buildNetwork',
  'synthesize.index.upstream',
  'synthesize.index.cutoff',
  'synthesize.index.slackDays',
  'synthesize.index.missingUploadTime',
  'synthesize.pythonVersions',
  'synthesize.reuse',
  'validate.engine',
];
const SYNTHESIZE_SKIP = [
  'synthesize.timeouts',
  'synthesize.index.timeoutSeconds',
  'synthesize.index.retries',
  'synthesize.agent.roundsPerModel',
  'synthesize.agent.maxTurns',
  'synthesize.agent.tokenBudget',
  'synthesize.neighbours',
  'docker.memoryMb',
  'docker.concurrency',
];

const CASES: readonly Case[] = [
  {
    name: 'discover (through the API): the four repository filters',
    config: fullConfig(),
    settings: discoverResultSettings,
    rerun: ['discover.minStars', 'discover.maxInactiveYears', 'discover.minPython', 'discover.requireAsvConfig'],
    skip: ['discover.source', 'discover.listFile', 'discover.codeSearch', 'discover.bigquery', 'github'],
  },
  {
    name: 'discover (a local clone): the Python version its support is judged against',
    config: fullConfig(),
    settings: cloneResultSettings,
    rerun: ['discover.minPython'],
    skip: ['discover.minStars', 'discover.requireAsvConfig'],
  },
  {
    name: 'collect (from the API): comments and linked issues',
    config: fullConfig(),
    settings: collectResultSettings,
    rerun: ['collect.comments', 'collect.maxLinkedIssues'],
    skip: ['collect.listPerPage', 'collect.gitTimeoutMs', 'collect.gitBatchSize', 'collect.gitWindowSlackDays', 'github'],
  },
  {
    name: 'filter: every rule of its section',
    config: fullConfig(),
    settings: (c) => hashOf(filterResultSettings(c)),
    rerun: ['filter'],
    skip: ['collect', 'classify', 'llm'],
  },
  {
    name: 'classify with an LLM: the models and its section',
    config: fullConfig(),
    settings: classifyResultSettings,
    rerun: ['llm.mode', 'llm.model', 'llm.fallbackModel', 'classify'],
    skip: ['llm.temperature', 'llm.maxOutputTokens', 'llm.baseUrl', 'llm.timeoutMs', 'llm.concurrency', 'llm.prices'],
  },
  {
    name: 'classify under --llm none: the mode only',
    config: fullConfig({ llm: { mode: 'none' } }),
    settings: classifyResultSettings,
    rerun: ['llm.mode'],
    skip: ['llm.model', 'classify.categorize', 'classify.verbatimThreshold'],
  },
  {
    name: 'synthesize, engine perfmine: the image, templates, Pythons, agent models, reuse; no asv settings',
    config: fullConfig(),
    settings: synthesizeResultSettings,
    rerun: [...SYNTHESIZE_COMMON, 'llm.mode', 'llm.model', 'llm.fallbackModel', 'synthesize.agent.fallback'],
    skip: [...SYNTHESIZE_SKIP, 'synthesize.asv.wheelhouse', 'synthesize.asv.discover'],
  },
  {
    name: 'synthesize, engine asv: also the wheelhouse and asv discovery',
    config: fullConfig({ validate: { engine: 'asv' } }),
    settings: synthesizeResultSettings,
    rerun: [
      ...SYNTHESIZE_COMMON,
      'llm.mode',
      'llm.model',
      'llm.fallbackModel',
      'synthesize.agent.fallback',
      'synthesize.asv.wheelhouse',
      'synthesize.asv.discover',
    ],
    skip: SYNTHESIZE_SKIP,
  },
  {
    name: 'synthesize under --llm none: no agent, so no model setting',
    config: fullConfig({ llm: { mode: 'none' } }),
    settings: synthesizeResultSettings,
    rerun: [...SYNTHESIZE_COMMON, 'llm.mode'],
    skip: ['llm.model', 'llm.fallbackModel', 'synthesize.agent.fallback'],
  },
  {
    name: 'validate, engine perfmine: the harness protocol, selection, paired verdict, limits, network of its repository',
    config: fullConfig(),
    settings: (c) => validateResultSettings(c, REPO),
    rerun: [...VALIDATE_COMMON, 'validate.harness', 'validate.selection', 'validate.selectionControls', ...PAIRED_BUT_NORMALIZATION],
    skip: [
      ...VALIDATE_SKIP,
      'validate.pairs',
      'validate.calibrationPairs',
      'validate.rounds',
      'validate.attributes',
      'validate.cpuAffinity',
      'validate.paired.minNormalizationWorkloads',
      'synthesize.asv',
    ],
  },
  {
    name: 'validate, engine perfmine measuring every workload: no selection controls',
    config: fullConfig({ validate: { selection: 'all' } }),
    settings: (c) => validateResultSettings(c, REPO),
    rerun: [...VALIDATE_COMMON, 'validate.harness', 'validate.selection', ...PAIRED_BUT_NORMALIZATION],
    skip: ['validate.selectionControls'],
  },
  {
    name: 'validate, engine asv: the invocation protocol, every paired option, the wheelhouse and asv discovery',
    config: fullConfig({ validate: { engine: 'asv' } }),
    settings: (c) => validateResultSettings(c, REPO),
    rerun: [
      ...VALIDATE_COMMON,
      'validate.pairs',
      'validate.calibrationPairs',
      'validate.rounds',
      'validate.attributes',
      'validate.cpuAffinity',
      'validate.paired',
      'synthesize.asv.wheelhouse',
      'synthesize.asv.discover',
    ],
    skip: [...VALIDATE_SKIP, 'validate.harness', 'validate.selection', 'validate.selectionControls'],
  },
  {
    name: 'emit: the clone URL, the image name and whether a folder carries its locked files',
    config: fullConfig(),
    settings: emitResultSettings,
    rerun: ['emit.repoUrl', 'emit.imageName', 'emit.vendorWheels'],
    skip: ['out', 'db'],
  },
];

describe('which settings re-run an item of each stage', () => {
  it.each(CASES)('$name', ({ config, settings, rerun, skip }) => {
    const rerunning = keysThatRerun(config, settings);
    expect(rerunning).toEqual(expand(config, rerun));
    for (const s of expand(config, skip)) expect(rerunning, `${s} must not re-run the stage`).not.toContain(s);
  });

  it('changes every leaf it walks (the walk covers the optional keys too)', () => {
    const config = fullConfig();
    const all = leaves(config);
    for (const path of [
      'llm.fallbackModel',
      'llm.baseUrl',
      'llm.maxOutputTokens',
      'discover.listFile',
      'llm.prices',
      'validate.attributes',
      'validate.env.OMP_NUM_THREADS',
      'validate.harness.adaptive.looks',
    ]) {
      expect(all).toContain(path);
    }
    for (const path of all) expect(hashOf(withLeafChanged(config, path)), path).not.toBe(hashOf(config));
  });
});

describe("validate: networkRepos counts only for the candidate's own repository", () => {
  const hash = (networkRepos: string[], repo = REPO) => hashOf(validateResultSettings(fullConfig({ validate: { networkRepos } }), repo));

  it('turns the network on for a listed repository, and that re-runs it', () => {
    expect(validateResultSettings(fullConfig({ validate: { networkRepos: [REPO] } }), REPO).network).toBe(true);
    expect(validateResultSettings(fullConfig({ validate: { networkRepos: ['other/lib'] } }), REPO).network).toBe(false);
    expect(hash([REPO])).not.toBe(hash([]));
  });

  it('re-runs nothing when another repository is added or removed, or the list is reordered', () => {
    expect(hash(['other/lib'])).toBe(hash([]));
    expect(hash([REPO, 'other/lib'])).toBe(hash([REPO]));
    expect(hash(['other/lib', REPO])).toBe(hash([REPO, 'other/lib']));
    expect(hash([REPO], 'other/lib')).toBe(hash([], 'other/lib'));
  });
});

describe("the index time machine's upstream in an input", () => {
  it("leaves out a loopback upstream's port (a loopback index is started afresh on a free port by each run), and keeps every other upstream whole", () => {
    expect(withoutLoopbackPort('http://127.0.0.1:40747/simple/')).toBe('http://127.0.0.1:*/simple/');
    expect(withoutLoopbackPort('http://localhost:8080/simple')).toBe('http://localhost:*/simple');
    expect(withoutLoopbackPort('http://[::1]:3141/')).toBe('http://[::1]:*/');
    expect(withoutLoopbackPort('https://pypi.org/simple/')).toBe('https://pypi.org/simple/');
    expect(withoutLoopbackPort('https://mirror.example:8443/simple/')).toBe('https://mirror.example:8443/simple/');
    expect(withoutLoopbackPort('dir:/srv/wheels')).toBe('dir:/srv/wheels');
    const at = (upstream: string) => synthesizeResultSettings(fullConfig({ synthesize: { index: { upstream } } }));
    expect(hashOf(at('http://127.0.0.1:1111/simple/'))).toBe(hashOf(at('http://127.0.0.1:2222/simple/')));
    expect(hashOf(at('http://127.0.0.1:1111/simple/'))).not.toBe(hashOf(at('https://pypi.org/simple/')));
  });
});
