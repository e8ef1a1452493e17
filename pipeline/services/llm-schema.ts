import { z } from 'zod';

/** The `response_format` of a chat completion request that asks for JSON of this schema. */
export interface JsonSchemaFormat {
  readonly type: 'json_schema';
  readonly json_schema: {
    readonly name: string;
    readonly schema: Record<string, unknown>;
    readonly strict: boolean;
  };
}

/**
 * The zod schema as a JSON schema for OpenAI structured output. `strict` is asked for only when
 * the schema satisfies strict mode (every object closed and listing all its properties as
 * required; optional fields are not allowed there): a server rejects a strict schema it cannot
 * honour. Either way the answer is validated with zod. Pure.
 */
export function responseFormatFor(schema: z.ZodType, name: string): JsonSchemaFormat {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return { type: 'json_schema', json_schema: { name: schemaName(name), schema: json, strict: strictCompatible(json) } };
}

/** OpenAI accepts `^[a-zA-Z0-9_-]{1,64}$`. */
export function schemaName(name: string): string {
  const clean = name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  return clean || 'answer';
}

export function strictCompatible(node: unknown): boolean {
  if (Array.isArray(node)) return node.every(strictCompatible);
  if (typeof node !== 'object' || node === null) return true;
  const obj = node as Record<string, unknown>;
  const isObject = obj.type === 'object' || (Array.isArray(obj.type) && obj.type.includes('object'));
  if (isObject) {
    const props = (obj.properties ?? {}) as Record<string, unknown>;
    const required = Array.isArray(obj.required) ? (obj.required as string[]) : [];
    if (obj.additionalProperties !== false) return false;
    if (Object.keys(props).some((k) => !required.includes(k))) return false;
  }
  return Object.values(obj).every(strictCompatible);
}

export type ParsedAnswer<T> = { ok: true; value: T; data: unknown } | { ok: false; error: string };

/** Parses an answer's text as JSON of the schema (`data`: the JSON before zod). Tolerates a ```json fence. Pure. */
export function parseAnswer<T>(schema: z.ZodType<T>, content: string): ParsedAnswer<T> {
  const text = unfence(content.trim());
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `the answer is not valid JSON (${(error as Error).message})` };
  }
  const parsed = schema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data, data };
  const issues = parsed.error.issues.slice(0, 8).map((i) => `${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`);
  return { ok: false, error: `the JSON does not match the schema: ${issues.join('; ')}` };
}

function unfence(text: string): string {
  const m = /^```(?:json|JSON)?\s*\n([\s\S]*?)\n?```$/.exec(text);
  return m ? m[1]!.trim() : text;
}
