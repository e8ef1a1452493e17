import { describe, expect, it } from 'vitest';
import { DockerService } from '../../../pipeline/services/docker.js';
import { JunitError, parseJunitXml } from '../../../stages/validate/correctness/junit.js';
import { compareTests, readPytestRun, TIMEOUT_EXIT } from '../../../stages/validate/correctness/tests.js';
import { writeFilesScript } from '../../../stages/validate/protocol/container-files.js';
import { framedInt, parseFramedOutput } from '../../../stages/validate/protocol/framed-output.js';
import { pytestScript } from '../../../stages/validate/protocol/pytest-script.js';

/**
 * Real JUnit reports: the pytest script the stage runs, in a fresh container of the base image
 * (pytest 7 on Debian's Python 3.11), on generated test suites written in by the container's own
 * command (nothing mounted).
 */
const BASE_IMAGE = process.env.PERFMINE_TEST_BASE_IMAGE ?? 'perfmine/base:bookworm';
const docker = new DockerService({ runLabel: `test-pytest-${process.pid}` });

async function pytest(_name: string, files: Record<string, string>): Promise<{ exitCode: number; xml: string }> {
  const repoDir = '/workspace/repo';
  const prefixed = Object.fromEntries(Object.entries(files).map(([p, t]) => [`${repoDir}/${p}`, t]));
  const script = `${writeFilesScript(prefixed)}\n${pytestScript({ repoDir, python: 'python3', timeLimitSeconds: 120, args: [] })}`;
  const result = await docker.run({
    image: BASE_IMAGE,
    cmd: ['bash', '-c', script],
    timeoutMs: 180_000,
    limits: { cpus: 1, memoryMb: 512, pidsLimit: 256 },
    tailChars: 1_000_000,
  });
  const framed = parseFramedOutput(result.stdout);
  const xml = framed.files.find((f) => f.kind === 'junit')?.content;
  if (xml === undefined) throw new Error(`no report: ${result.stdout}${result.stderr}`);
  return { exitCode: framedInt(framed, 'rc') ?? -1, xml };
}

const BASE_TESTS = `
import pytest

def test_sum():
    assert sum([1, 2]) == 3

@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n > 0

@pytest.mark.skip(reason="slow")
def test_slow():
    pass

class TestGroup:
    def test_method(self):
        assert True
`;

describe('pytest JUnit reports (real pytest in the base image)', () => {
  it('reads outcomes per test id, parameters and classes included', async () => {
    const { exitCode, xml } = await pytest('base', { 'tests/test_core.py': BASE_TESTS });
    expect(exitCode).toBe(0);
    const reading = readPytestRun({ exitCode, timedOut: false, junitXml: xml, log: '' });
    expect(reading.collected).toBe(true);
    if (!reading.collected) return;
    expect([...reading.report.tests.entries()]).toEqual([
      ['tests.test_core::test_sum', 'passed'],
      ['tests.test_core::test_param[1]', 'passed'],
      ['tests.test_core::test_param[2]', 'passed'],
      ['tests.test_core::test_slow', 'skipped'],
      ['tests.test_core.TestGroup::test_method', 'passed'],
    ]);
  });

  it('finds the tests the expert no longer passes (failing, erroring, skipped or gone)', async () => {
    const base = await pytest('cmp-base', { 'tests/test_core.py': BASE_TESTS });
    const expertTests = BASE_TESTS.replace('assert n > 0', 'assert n > 1')
      .replace('def test_sum():\n    assert sum([1, 2]) == 3', 'def test_sum():\n    pytest.skip("now skipped")')
      .replace('class TestGroup:', 'class TestRenamed:');
    const expert = await pytest('cmp-expert', { 'tests/test_core.py': expertTests });
    expect(expert.exitCode).toBe(1);
    const b = readPytestRun({ exitCode: base.exitCode, timedOut: false, junitXml: base.xml, log: '' });
    const e = readPytestRun({ exitCode: expert.exitCode, timedOut: false, junitXml: expert.xml, log: '' });
    if (!b.collected || !e.collected) throw new Error('not collected');
    const c = compareTests(b.report, e.report, { base: false, expert: false });
    expect(c.basePassed).toBe(4);
    expect(c.regressions).toEqual([
      { test: 'tests.test_core::test_sum', expert: 'skipped' },
      { test: 'tests.test_core::test_param[1]', expert: 'failed' },
      { test: 'tests.test_core.TestGroup::test_method', expert: 'not-run' },
    ]);
  });

  it('says the tests cannot be collected when a test module does not import', async () => {
    const { exitCode, xml } = await pytest('broken', {
      'tests/test_ok.py': 'def test_ok():\n    pass\n',
      'tests/test_bad.py': 'from nowhere import gone\n',
    });
    expect(exitCode).toBe(2);
    const reading = readPytestRun({ exitCode, timedOut: false, junitXml: xml, log: '' });
    expect(reading).toEqual({ collected: false, why: 'collection errors in tests.test_bad' });
  });

  it('says the tests cannot be collected when there are none, or no report was written', async () => {
    const { exitCode, xml } = await pytest('empty', { 'tests/readme.txt': 'no tests here\n' });
    expect(exitCode).toBe(5);
    expect(readPytestRun({ exitCode, timedOut: false, junitXml: xml, log: '' })).toEqual({ collected: false, why: 'no tests collected' });
    expect(readPytestRun({ exitCode: null, timedOut: true, junitXml: null, log: '' })).toMatchObject({ collected: false });
  });

  it('keeps what ran before the time limit (timeout exit 124) as collected', async () => {
    const { xml } = await pytest('limit', { 'tests/test_core.py': BASE_TESTS });
    expect(readPytestRun({ exitCode: TIMEOUT_EXIT, timedOut: false, junitXml: xml, log: '' })).toMatchObject({
      collected: true,
      hitTimeLimit: true,
    });
  });

  it('rejects text that is not a JUnit report', () => {
    expect(() => parseJunitXml('<html><body>nope</body></html>')).toThrow(JunitError);
    expect(() => parseJunitXml('<testsuites><testsuite>')).toThrow(/not well-formed/);
    expect(readPytestRun({ exitCode: 0, timedOut: false, junitXml: '<oops', log: '' })).toMatchObject({ collected: false });
  });
});
