import { z } from 'zod';
import type { ContainerLimits, DockerService } from '../../pipeline/services/docker.js';
import type { AgentTool } from '../../pipeline/services/llm-port.js';
import type { GitTree } from './git-tree.js';
import { tailOf } from './agent-inputs.js';
import { PREPARE_SCRIPT } from '../../pipeline/services/environments/verification.js';

export interface ToolContext {
  readonly tree: GitTree;
  readonly sha: string;
  readonly docker: DockerService;
  /** The commit's source tier (the commit sealed at /repo): sandboxes are throwaway containers of it. */
  readonly sourceImage: string;
  /** The image of the last attempt that built (verified or not), if any. */
  readonly lastImage: () => string | null;
  readonly pythonVersion: string | null;
  readonly limits: ContainerLimits;
  readonly timeoutMs: number;
  /** Characters of a tool's answer the model sees. */
  readonly maxChars?: number;
}

const LIST_LIMIT = 400;

/** Tree listing: every path under `prefix`, or the immediate children with counts when there are too many. Pure. */
export function listTree(paths: readonly string[], prefix: string): string {
  const p = prefix.replace(/^\.?\/+/, '').replace(/\/+$/, '');
  const under = p ? paths.filter((x) => x.startsWith(`${p}/`)) : [...paths];
  if (under.length === 0) return p ? `no tracked files under ${p}/` : 'the repository has no tracked files';
  if (under.length <= LIST_LIMIT) return under.join('\n');
  const counts = new Map<string, number>();
  for (const x of under) {
    const rest = p ? x.slice(p.length + 1) : x;
    const slash = rest.indexOf('/');
    const child = slash < 0 ? rest : `${rest.slice(0, slash)}/`;
    counts.set(child, (counts.get(child) ?? 0) + 1);
  }
  return [
    `${under.length} files under ${p || 'the root'}; its entries (directories with their file counts):`,
    ...[...counts].map(([c, n]) => (c.endsWith('/') ? `${c} (${n} files)` : c)),
  ].join('\n');
}

function sandboxOutput(r: { exitCode: number | null; timedOut: boolean; stdout: string; stderr: string }, max: number): string {
  const half = Math.floor(max / 2);
  return `${r.timedOut ? 'killed at the time limit' : `exit code ${r.exitCode}`}\n--- stdout ---\n${tailOf(r.stdout, half)}\n--- stderr ---\n${tailOf(r.stderr, half)}`;
}

/** The agent's tools: read the tree at the commit, probe a sandbox copy, try an import. */
export function buildAgentTools(ctx: ToolContext): AgentTool[] {
  const max = ctx.maxChars ?? 12_000;
  let listing: Promise<string[]> | null = null;
  const files = () => (listing ??= ctx.tree.listFiles(ctx.sha));
  const sandbox = (image: string, command: string, checkout: boolean, env: Record<string, string> = {}) =>
    ctx.docker.run({
      image,
      cmd: ['bash', '-c', checkout ? `bash /perfmine/prepare.sh >/dev/null && cd /repo && ${command}` : `cd /repo && ${command}`],
      env: { PERFMINE_SHA: ctx.sha, ...(ctx.pythonVersion ? { PERFMINE_PYTHON: `python${ctx.pythonVersion}` } : {}), ...env },
      network: 'none',
      timeoutMs: ctx.timeoutMs,
      limits: ctx.limits,
      tailChars: max,
      labels: { 'org.perfmine.role': 'agent-tool' },
      ...(checkout ? { files: [{ name: 'perfmine/prepare.sh', content: PREPARE_SCRIPT, mode: 0o755 }] } : {}),
    });

  const parse = <T>(schema: z.ZodType<T>, args: unknown): T | string => {
    const r = schema.safeParse(args);
    return r.success
      ? r.data
      : `error: invalid arguments: ${r.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`;
  };

  return [
    {
      name: 'list_tree',
      description: 'List the tracked files of the repository at the commit, under an optional directory.',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string', description: 'directory, relative to the repository root; empty for the root' } },
        additionalProperties: false,
      },
      async run(args) {
        const a = parse(z.object({ path: z.string().optional() }).strict(), args ?? {});
        if (typeof a === 'string') return a;
        return tailOf(listTree(await files(), a.path ?? ''), max);
      },
    },
    {
      name: 'read_file',
      description: 'Read a tracked file of the repository at the commit (first 12,000 characters, or from a line).',
      parameters: {
        type: 'object',
        properties: { path: { type: 'string' }, start_line: { type: 'integer', minimum: 1 } },
        required: ['path'],
        additionalProperties: false,
      },
      async run(args) {
        const a = parse(z.object({ path: z.string().min(1), start_line: z.number().int().positive().optional() }).strict(), args);
        if (typeof a === 'string') return a;
        const text = await ctx.tree.readFile(ctx.sha, a.path, 2_000_000).catch((e: Error) => `error: ${e.message}`);
        if (text === null) return `error: no file ${a.path} at this commit`;
        const from = a.start_line
          ? text
              .split('\n')
              .slice(a.start_line - 1)
              .join('\n')
          : text;
        return from.length > max ? `${from.slice(0, max)}\n[... ${from.length - max} more characters; read on with start_line]` : from;
      },
    },
    {
      name: 'probe_repo',
      description:
        'Run a shell command in a throwaway sandbox copy of the repository checked out at the commit (no network, time-limited). Use it to inspect, not to build.',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'], additionalProperties: false },
      async run(args) {
        const a = parse(z.object({ command: z.string().min(1).max(2000) }).strict(), args);
        if (typeof a === 'string') return a;
        return sandboxOutput(await sandbox(ctx.sourceImage, a.command, true), max);
      },
    },
    {
      name: 'try_import',
      description:
        'Try to import a Python module: in the image of the last build when there is one, otherwise from the sources of the commit (PYTHONPATH=/repo:/repo/src).',
      parameters: { type: 'object', properties: { module: { type: 'string' } }, required: ['module'], additionalProperties: false },
      async run(args) {
        const a = parse(z.object({ module: z.string().regex(/^[A-Za-z_][\w.]*$/, 'a dotted module name') }).strict(), args);
        if (typeof a === 'string') return a;
        const code = `"\${PERFMINE_PYTHON:-python3}" -c 'import importlib, sys; m = importlib.import_module(sys.argv[1]); print("imported", m.__name__, "from", getattr(m, "__file__", None))' ${a.module}`;
        const last = ctx.lastImage();
        const r = last
          ? await sandbox(last, `cd / && ${code}`, false)
          : await sandbox(ctx.sourceImage, `cd / && ${code}`, true, { PYTHONPATH: '/repo:/repo/src' });
        return `${last ? `in the last built image` : 'from the sources (no image built yet)'}: ${sandboxOutput(r, max)}`;
      },
    },
  ];
}
