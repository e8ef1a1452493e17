import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packagePath } from '../../pipeline/package-root.js';

/**
 * The verifier's channel (perfmine_channel.py) against child processes that break its protocol the
 * ways a change under test can make them: an answer written before its request, a second answer,
 * a line after the final one, an answer nested a million deep or longer than the limit, a process
 * that dies before it answers or never answers, and one that leaves a helper holding the pipe open.
 * Each is a named broken channel (or a timeout), never a hang, never an exception of another kind.
 */
const DIR = packagePath('python');
const dir = mkdtempSync(join(tmpdir(), 'channel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A child program: answer(obj) and request() from open_channel (ANS: the answer descriptor itself), then `body`. */
function child(name: string, body: string): string {
  const path = join(dir, `${name}.py`);
  writeFileSync(
    path,
    `import sys, os, json, time\nsys.path.insert(0, ${JSON.stringify(DIR)})\nfrom perfmine_channel import open_channel\nANS = int(os.environ["PERFMINE_CHANNEL"].split(",")[1])\nrequest, answer = open_channel()\n${body}\n`,
  );
  return path;
}

/** Runs the verifier's side against a child: hello, then one request (op ping), then finish. */
function drive(childPath: string, timeout = 20): { outcome: string; message: string; code?: number | null } {
  const driver = `
import sys, json
sys.path.insert(0, ${JSON.stringify(DIR)})
import perfmine_channel as c
child = c.Child([sys.executable, ${JSON.stringify(childPath)}], {"PATH": "/usr/bin:/bin"}, ${JSON.stringify(dir)}, ${JSON.stringify(join(dir, 'log.txt'))}, what="the child")
try:
    child.receive("hello", ${timeout})
    a = child.ask({"op": "ping"}, "pong", ${timeout})
    code = child.finish(${timeout})
    print(json.dumps({"outcome": "ok", "message": json.dumps(a), "code": code}))
except c.ChannelBroken as e:
    print(json.dumps({"outcome": "broken", "message": str(e)}))
except c.ChannelTimeout as e:
    print(json.dumps({"outcome": "timeout", "message": str(e)}))
finally:
    child.close()
`;
  return JSON.parse(execFileSync('python3', ['-c', driver], { encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop()!);
}

describe("the verifier's channel", () => {
  it('a child that keeps the protocol: its answer, then its exit status', () => {
    const r = drive(child('good', 'answer({"kind": "hello"})\nr = request()\nanswer({"kind": "pong", "got": r["op"]})\nrequest()'));
    expect(r).toMatchObject({ outcome: 'ok', code: 0 });
    expect(JSON.parse(r.message)).toEqual({ kind: 'pong', got: 'ping' });
  });

  it('an answer written before its request (ahead of time) breaks the channel', () => {
    // one write: both lines reach the reader together, before it sends its request
    const r = drive(child('ahead', 'os.write(ANS, b\'{"kind": "hello"}\\n{"kind": "pong"}\\n\')\nrequest()\nrequest()'));
    expect(r).toMatchObject({ outcome: 'broken' });
    expect(r.message).toMatch(/before it was asked/);
  });

  it('an answer of another kind, or a line written after the final answer, breaks the channel', () => {
    expect(drive(child('kind', 'answer({"kind": "hello"})\nrequest()\nanswer({"kind": "ok"})\nrequest()')).message).toMatch(
      /answered 'ok' where 'pong' was due/,
    );
    const late = drive(
      child('late', 'answer({"kind": "hello"})\nrequest()\nanswer({"kind": "pong"})\nrequest()\nanswer({"kind": "finished"})'),
    );
    expect(late).toMatchObject({ outcome: 'broken' });
    expect(late.message).toMatch(/wrote after its final answer/);
  });

  it('an answer nested a million deep, or longer than the limit, or not JSON: broken, not a crash of the reader', () => {
    const bomb = drive(child('bomb', 'answer({"kind": "hello"})\nrequest()\nos.write(ANS, b"[" * 1000000 + b"\\n")\nrequest()'));
    expect(bomb).toMatchObject({ outcome: 'broken' });
    expect(bomb.message).toMatch(/nested|not JSON/);
    const long = drive(child('long', 'answer({"kind": "hello"})\nrequest()\nanswer({"kind": "pong", "x": "y" * (9 << 20)})'));
    expect(long).toMatchObject({ outcome: 'broken' });
    expect(long.message).toMatch(/longer than/);
  });

  it('a child that dies before it answers: broken, naming how it ended', () => {
    const r = drive(child('dies', 'answer({"kind": "hello"})\nrequest()\nos._exit(7)'));
    expect(r).toMatchObject({ outcome: 'broken' });
    expect(r.message).toMatch(/ended \(exit 7\) before it answered/);
  });

  it('a child that never answers: a timeout, the child killed', () => {
    const r = drive(child('silent', 'answer({"kind": "hello"})\nwhile True:\n    time.sleep(1)'), 2);
    expect(r).toMatchObject({ outcome: 'timeout' });
  });

  it('a helper left holding the pipe open does not keep the reader waiting', () => {
    const r = drive(
      child(
        'helper',
        'answer({"kind": "hello"})\nrequest()\nanswer({"kind": "pong"})\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(600)\n    os._exit(0)\nrequest()',
      ),
    );
    expect(r).toMatchObject({ outcome: 'ok', code: 0 });
  });
});
