import { stripHtmlComments } from '../../pipeline/concepts/html-comments.js';
/**
 * Message rules on a pull request's title, body and labels. Pure.
 *
 * - Negative patterns (revert, release, version bump, typo, formatting, docs, CI, lint, tests,
 *   dependency bots ...) are looked for in the title only, plus the `This reverts commit` line of
 *   a body: bodies are full of PR-template boilerplate ("make sure linting passes", "tests
 *   added") that says nothing about the change.
 * - Positive performance cues are looked for in the title, the body (HTML comments removed: PR
 *   templates keep their guidance there; a body read from a squash or merge commit, only the
 *   cues of COMMIT_BODY_CUES and `perf`/`performance`), the name of the branch the pull request came from
 *   (split into words on `-`, `_` and `/`: `faster-cell-len` reads `faster cell len`) and the
 *   labels.
 * - A revert or a backport restates another pull request's title ("Revert \"PERF: faster x\""):
 *   the quoted or parenthesised part of such a title is not searched for positive cues, nor is
 *   its branch (GitHub names it after the original's: `revert-3546-faster-cell-len`).
 *
 * Verdicts: `negative` (a negative pattern and no positive cue: dropped), `mixed` (both: goes on),
 * `positive` (cues only), `ambiguous` (neither: the LLM decides).
 */

/** Where a cue was found; `files`: the changed files themselves (benchmarks changed beside the code, stages/filter/decide.ts). */
export type CueSource = 'title' | 'body' | 'branch' | 'label' | 'files';

export interface CueMatch {
  /** Stable cue name, e.g. `speed`, `revert`. */
  readonly cue: string;
  readonly where: CueSource;
  /** The matched text (at most 60 characters). */
  readonly text: string;
}

export type MessageVerdict = 'positive' | 'mixed' | 'ambiguous' | 'negative';

export interface MessageDecision {
  readonly verdict: MessageVerdict;
  readonly positive: readonly CueMatch[];
  readonly negative: readonly CueMatch[];
}

interface Rule {
  readonly cue: string;
  readonly re: RegExp;
}

export const POSITIVE_CUES: readonly Rule[] = [
  { cue: 'performance', re: /\bperf(?:ormance|ormant)?\b/i },
  { cue: 'speed', re: /\bspeed(?:s|ed|ing|up|ups)?\b|\bsped up\b/i },
  { cue: 'faster', re: /\bfast(?:er|est)\b|\bfast[\s-]?paths?\b/i },
  { cue: 'slow', re: /\bslow(?:er|est|ness|downs?|ly|s)?\b/i },
  { cue: 'optimize', re: /\b(?:de)?optimi[sz](?:e|es|ed|ing|ation|ations)\b/i },
  { cue: 'latency', re: /\blatency\b/i },
  { cue: 'throughput', re: /\bthroughput\b/i },
  { cue: 'memory', re: /\bmemory\b/i },
  { cue: 'vectorize', re: /\bvectori[sz](?:e|es|ed|ing|ation)\b/i },
  {
    cue: 'cache',
    // not a cache being cleared, invalidated or reset: that fixes stale results ("Clear hashed
    // cache when clearing meta", rich #2943; "Clear the dispatch cache in remove_node_attributes",
    // networkx #8806), it does not make anything faster
    re: /(?<!\b(?:clear|clears|cleared|clearing|clean|cleans|cleaned|cleaning|invalidat\w*|reset\w*|flush\w*|purg\w*|evict\w*|stale)\s+(?:[\w`.-]+\s+){0,2})\bcach(?:e|es|ed|ing)\b|\bmemoi[sz](?:e|es|ed|ing|ation)\b|\blru_cache\b/i,
  },
  { cue: 'efficient', re: /\b(?:in)?efficien(?:t|tly|cy)\b/i },
  { cue: 'overhead', re: /\boverhead\b/i },
  { cue: 'bottleneck', re: /\bbottlenecks?\b/i },
  { cue: 'complexity', re: /\bO\((?:n|1|log|m|k|e|v|\|)[^)]{0,12}\)|\bquadratic\b|\bcomplexity\b/i },
  { cue: 'avoid-copy', re: /\bavoid(?:s|ing)?\s+(?:an?\s+|unnecessary\s+|extra\s+|redundant\s+)?cop(?:y|ies|ying)\b|\bzero[\s-]copy\b/i },
  {
    cue: 'runtime',
    // "run time", "import time", "execution time" ...; the single word "runtime" only with what
    // says it got shorter ("improve runtime", "runtime of"): alone it is mostly "runtime
    // dependency", "runtime error", "at runtime", or a branch named "...-runtime"
    re: /\b(?:run|execution|import|load|wall)[\s-]times?\b(?!\s+(?:dependenc|requirement|error|exception|warning|type|check|environment|option|argument|config|behaviou?r))|\b(?:improv\w*|reduc\w*|lower\w*|better|faster|shorter|decreas\w*)\s+(?:the\s+|its\s+)?runtimes?\b|\bruntimes?\s+(?:of|improvements?|performance|cost|overhead|reduction)\b/i,
  },
  { cue: 'timing', re: /%timeit\b|\btimeit\b|\b\d+(?:\.\d+)?\s*(?:ms|µs|us|ns)\s*±/i },
  { cue: 'gil', re: /\b(?:release|releasing|drop|no)\s*(?:the\s+)?gil\b|\bnogil\b/i },
  // The vocabulary of real performance pull requests that name the technique, not the effect.
  { cue: 'short-circuit', re: /\bshort[\s-]?circuit(?:s|ed|ing)?\b/i },
  {
    cue: 'early-exit',
    re: /\bearly[\s-](?:exit|return|break|stop|termination|out)s?\b|\b(?:return|exit|break|stop|bail\s+out)s?\s+early\b/i,
  },
  { cue: 'precompute', re: /\bpre[\s-]?comput(?:e|es|ed|ing|ation)\b/i },
  {
    cue: 'avoid-recompute',
    // also work avoided outright: "Avoid building the flow dict in maximum_flow_value" (networkx
    // #8754), "Avoid constructing intermediate paths"
    re: /\bavoid(?:s|ing)?\s+(?:re-[a-z]+|re(?:comput|calculat|creat|build|allocat|pars|read|load|sort|index|cast|explor|evaluat|validat|convert|travers|scan|hash|fetch)[a-z]*|repeated|redundant|unnecessary|needless|(?:building|constructing|materiali[sz]ing|computing|allocating)\s+(?:the\s+|an?\s+)?(?:\w+\s+)?(?:intermediate|temporary|full|whole|entire|dict|list|array|copy|copies|graph|matrix|paths?|index|object)s?)\b/i,
  },
  { cue: 'lazily', re: /\blazily\b/i },
];

/**
 * The cues that count in a body taken from a commit message (a squash commit's list of the pull
 * request's commits, a merge commit's body): only those that say performance outright or name a
 * technique. Commit lists are long and talk about everything (a docstring's "runtime
 * complexity", an "energy optimization", making a test "more performant", "use precomputed
 * values" in a new algorithm); on real months the other cues there were all false positives.
 */
export const COMMIT_BODY_CUES: ReadonlySet<string> = new Set([
  'speed',
  'faster',
  'short-circuit',
  'early-exit',
  'avoid-recompute',
  'vectorize',
  'timing',
]);
const COMMIT_BODY_RULES: readonly Rule[] = [
  { cue: 'performance', re: /\bperf(?:ormance)?\b/i },
  ...POSITIVE_CUES.filter((r) => COMMIT_BODY_CUES.has(r.cue)),
];

export const NEGATIVE_PATTERNS: readonly Rule[] = [
  { cue: 'revert', re: /^\s*revert\b/i },
  { cue: 'backport', re: /^\s*backport\b|\[backport\]/i },
  {
    cue: 'release',
    re: /^\s*REL\s*:|\b(?:release|releasing|prepare|preparing)\s+(?:for\s+)?v?\d+\.\d+|\brelease notes?\b|\bchangelog\b|\bwhat'?s\s?new\b/i,
  },
  {
    cue: 'version-bump',
    re: /\bbump(?:s|ed|ing)?\b|\bversion bump\b|\bupdate (?:the )?version\b|^\s*(?:build|chore)\(deps(?:-dev)?\)|\bdependabot\b|\bpre-commit\.ci\b/i,
  },
  { cue: 'typo', re: /\btypos?\b|\bspelling\b|\bmisspell/i },
  {
    cue: 'formatting',
    re: /^\s*STY\s*[:(\]]|\breformat(?:s|ted|ting)?\b|\bformatting\b|\bcode style\b|\bwhitespace\b|\bblack\b|\bisort\b|\bruff format\b|\bautopep8\b|\byapf\b/i,
  },
  {
    cue: 'docs',
    re: /^\s*(?:DOC|DOCS)\s*[:(\]]|^\s*docs?(?:\([^)]*\))?\s*:|\bdocumentation\b|\bdocstrings?\b|\bREADME\b|\bdocs?[\s-]only\b|\bfix(?:es|ed)? (?:the )?docs?\b/i,
  },
  {
    cue: 'ci',
    re: /^\s*(?:CI|BLD)\s*[:(\]]|^\s*ci(?:\([^)]*\))?\s*:|\bCI\b|\b[Gg]it[Hh]ub [Aa]ctions?\b|\b[Ww]orkflows?\b|\b[Aa]zure [Pp]ipelines?\b|\b[Cc]ircle[Cc][Ii]\b|\b[Tt]ravis\b|\b[Cc]odecov\b/,
  },
  {
    cue: 'lint',
    re: /\blint(?:s|ing|er|ers)?\b|\bflake8\b|\bpylint\b|\bmypy\b|\bruff\b|\bpre-commit\b|\btype (?:hints?|annotations?)\b|\btyping\b/i,
  },
  {
    cue: 'tests-only',
    re: /^\s*(?:TST|TEST|TESTS)\s*[:(\]]|^\s*tests?(?:\([^)]*\))?\s*:|\badd(?:s|ed|ing)? (?:a |more |missing )?tests?\b/i,
  },
  { cue: 'deprecation', re: /^\s*DEP\s*[:(\]]|\bdeprecat(?:e|es|ed|ing|ion)\b/i },
  { cue: 'merge-branch', re: /^\s*Merge (?:branch|remote-tracking branch|pull request)\b/i },
];

const BODY_REVERT = /\bThis reverts commit [0-9a-f]{7,40}\b/i;
const PERF_LABEL = /perf|performance|speed|optimi[sz]|slow|memory/i;

/** The title without what a revert or backport quotes from the original pull request. */
export function ownTitleText(title: string): string {
  if (REVERT_OR_BACKPORT_TITLE.test(title)) {
    return title.replace(/"[^"]*"?|“[^”]*”?|'[^']*'|\([^)]*\)?/g, ' ');
  }
  return title;
}

const REVERT_OR_BACKPORT_TITLE = /^\s*(?:revert|backport)\b|\[backport\]/i;
const REVERT_OR_BACKPORT_BRANCH = /^(?:revert|backport|auto-backport)\b/i;

/**
 * The words of the branch a pull request came from, as text for the cues (`Textualize/faster-cell-len`
 * → `Textualize faster cell len`), or '' when there is none or it belongs to another pull
 * request (a revert's or a backport's branch, or any branch of a pull request titled so).
 */
export function branchText(headRef: string | null | undefined, title: string): string {
  if (!headRef || REVERT_OR_BACKPORT_BRANCH.test(headRef) || REVERT_OR_BACKPORT_TITLE.test(title)) return '';
  return headRef
    .split(/[-_/]+/)
    .filter((w) => w !== '')
    .join(' ');
}

function matches(rules: readonly Rule[], text: string, where: CueSource): CueMatch[] {
  const out: CueMatch[] = [];
  for (const { cue, re } of rules) {
    const m = re.exec(text);
    if (m) out.push({ cue, where, text: m[0].trim().slice(0, 60) });
  }
  return out;
}

export function judgeMessage(input: {
  readonly title: string;
  readonly body: string;
  readonly labels: readonly string[];
  /** The branch the pull request came from (GitHub's `head.ref`), when known. */
  readonly headRef?: string | null | undefined;
  /** Where the body came from (absent: the pull request's description). */
  readonly bodySource?: 'squash-commit' | 'merge-commit' | undefined;
}): MessageDecision {
  const body = stripHtmlComments(input.body);
  const fromCommit = input.bodySource !== undefined;
  const negative = matches(NEGATIVE_PATTERNS, input.title, 'title');
  // A commit body's "This reverts commit" is about one of the pull request's own commits (a
  // revert within the branch); a reverting pull request says so in its title.
  const bodyRevert = fromCommit ? null : BODY_REVERT.exec(body);
  if (bodyRevert && !negative.some((n) => n.cue === 'revert')) negative.push({ cue: 'revert', where: 'body', text: bodyRevert[0] });

  const positive = [
    ...matches(POSITIVE_CUES, ownTitleText(input.title), 'title'),
    ...matches(fromCommit ? COMMIT_BODY_RULES : POSITIVE_CUES, body, 'body'),
    ...matches(POSITIVE_CUES, branchText(input.headRef, input.title), 'branch'),
  ];
  for (const label of input.labels) {
    if (PERF_LABEL.test(label)) positive.push({ cue: 'label', where: 'label', text: label.slice(0, 60) });
  }

  const verdict: MessageVerdict =
    negative.length > 0 ? (positive.length > 0 ? 'mixed' : 'negative') : positive.length > 0 ? 'positive' : 'ambiguous';
  return { verdict, positive, negative };
}
