import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { z } from 'zod';

/**
 * pytest's JUnit XML report (`--junitxml`), read into one outcome per test. A test is named
 * `classname::name` (`tests.test_core.TestAdd::test_int[1-2]`); a collection error is a test
 * case with an `<error message="collection failure">` and an empty classname. Pure.
 */

export type TestOutcome = 'passed' | 'failed' | 'error' | 'skipped';

export interface JunitReport {
  /** Outcome per test id, in file order. */
  readonly tests: ReadonlyMap<string, TestOutcome>;
  /** Ids of test cases that record a collection error. */
  readonly collectionErrors: readonly string[];
}

const attrs = z.looseObject({ '@_classname': z.string().optional(), '@_name': z.string().optional() });
const child = z.union([z.string(), z.looseObject({ '@_message': z.string().optional() })]);
const testcase = attrs.extend({
  failure: z.array(child).optional(),
  error: z.array(child).optional(),
  skipped: z.array(child).optional(),
});
const testsuite = z.looseObject({ testcase: z.array(testcase).optional() });
const document = z.looseObject({
  testsuites: z.array(z.looseObject({ testsuite: z.array(testsuite).optional() })).optional(),
  testsuite: z.array(testsuite).optional(),
});

export class JunitError extends Error {
  override readonly name = 'JunitError';
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  // every element an array, so that one test case and many read alike (attributes stay strings)
  isArray: (_name: string, _path: unknown, _leaf: boolean, isAttribute: boolean) => !isAttribute,
  parseAttributeValue: false,
  parseTagValue: false,
  processEntities: true,
});

function messageOf(c: z.infer<typeof child>): string {
  return typeof c === 'string' ? '' : (c['@_message'] ?? '');
}

/** Parses a JUnit XML report; throws a JunitError for text that is not one. */
export function parseJunitXml(xml: string): JunitReport {
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new JunitError(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  const parsed = document.safeParse(parser.parse(xml));
  if (!parsed.success) throw new JunitError(`not a JUnit report: ${parsed.error.issues[0]?.message ?? 'unexpected structure'}`);
  const suites = [...(parsed.data.testsuites ?? []).flatMap((s) => s.testsuite ?? []), ...(parsed.data.testsuite ?? [])];
  if (parsed.data.testsuites === undefined && parsed.data.testsuite === undefined)
    throw new JunitError('not a JUnit report: no <testsuites> or <testsuite>');
  const tests = new Map<string, TestOutcome>();
  const collectionErrors: string[] = [];
  for (const suite of suites) {
    for (const tc of suite.testcase ?? []) {
      const classname = tc['@_classname'] ?? '';
      const name = tc['@_name'] ?? '';
      const id = classname === '' ? name : `${classname}::${name}`;
      const outcome: TestOutcome = tc.error ? 'error' : tc.failure ? 'failed' : tc.skipped ? 'skipped' : 'passed';
      if (tc.error?.some((e) => /collection failure/i.test(messageOf(e)))) collectionErrors.push(id);
      // a test reported twice (call failure and teardown error) keeps its worst outcome
      const previous = tests.get(id);
      tests.set(id, previous === undefined || previous === 'passed' || previous === 'skipped' ? outcome : previous);
    }
  }
  return { tests, collectionErrors };
}
