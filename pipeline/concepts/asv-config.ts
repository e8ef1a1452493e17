import JSON5 from 'json5';
import { z } from 'zod';

/**
 * The parts of an asv config (asv.conf.json / .jsonc) perfmine reads. asv configs carry comments
 * and trailing commas, so the text is parsed as JSON5. Pure.
 */
export const asvConfigSchema = z
  .object({
    project: z.string().optional(),
    project_url: z.string().optional(),
    repo: z.string().optional(),
    benchmark_dir: z.string().optional(),
    environment_type: z.string().optional(),
    /** The Python versions asv builds environments for (`X.Y` strings; a bare number is read as its text). */
    pythons: z
      .array(z.union([z.string(), z.number()]))
      .transform((list) => list.map(String))
      .optional()
      .catch(undefined),
  })
  .loose();
export type AsvConfig = z.infer<typeof asvConfigSchema>;

export type AsvConfigParse = { readonly ok: true; readonly config: AsvConfig } | { readonly ok: false; readonly error: string };

const parsedConfigs = new Map<string, AsvConfigParse>();

/** Parses an asv config (JSON5). Pull requests of a repository mostly share one text: parsed once. */
export function parseAsvConfig(text: string): AsvConfigParse {
  let parsed = parsedConfigs.get(text);
  if (!parsed) {
    if (parsedConfigs.size >= 1024) parsedConfigs.clear();
    parsedConfigs.set(text, (parsed = parseAsvConfigText(text)));
  }
  return parsed;
}

function parseAsvConfigText(text: string): AsvConfigParse {
  let data: unknown;
  try {
    data = JSON5.parse(text);
  } catch (error) {
    return { ok: false, error: `not JSON5: ${(error as Error).message}` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return { ok: false, error: 'not a JSON object' };
  const parsed = asvConfigSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, error: `${issue?.path.join('.') || '(top level)'}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, config: parsed.data };
}
