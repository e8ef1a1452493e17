"""The verifier's end of a channel to a process that runs the code under test (perfmine_verify.py).

A check whose verdict depends on what the code under test does (a test run, the benchmarks'
return values) cannot take that process's word written to a file: the code runs in that process
and can rewrite any file, at exit or later. So the verifier drives such a process over two pipes
of its own, one request at a time, and reads every answer as it happens:

  - the child gets the pipes' ends as file descriptors named in PERFMINE_CHANNEL ("R,W"); it
    writes one JSON object per line on W and reads requests on R; its stdout and stderr go to a
    log file, never to the channel;
  - every answer must come after the request it answers, of the kind the request expects, once:
    a line written before its request (ahead of time, at import), a second answer, an unknown
    kind, a line that is not a JSON object, a line over the size limit or nested deeper than the
    limit, or the pipe closed before the final handshake, is a broken channel (ChannelBroken);
  - the final handshake ("end") must be followed by nothing but the end of the pipe and the
    process's exit, whose status the caller cross-checks with what the answers said.

What was read stays read: an exit hook or a helper process can write more, which then breaks
the channel; it cannot change what the verifier already holds. What the channel cannot see: code
that runs inside the child and speaks for it (patching the child's own functions before they
answer); the hack detector (perfmine_detect.py) looks for such code by its names.

Python 3.8+, standard library only.
"""

import json
import os
import select
import signal
import subprocess
import time

from perfmine_bench_account import own

#: One answer line at most (bytes); a longer line breaks the channel.
MAX_LINE = 8 << 20
#: Nesting of an answer at most (JSON arrays and objects).
MAX_DEPTH = 200


class ChannelBroken(Exception):
    """What came through the channel breaks its protocol (the process's doing, not the verifier's)."""


class ChannelTimeout(Exception):
    """No answer within the time limit (the process was killed)."""


def depth_ok(value, limit=MAX_DEPTH):
    """Whether a parsed JSON value is nested no deeper than limit (iteratively: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


def parse_line(raw):
    """A JSON object from an answer line, or ChannelBroken saying why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ChannelBroken("an answer that is not UTF-8")
    try:
        value = json.loads(text)
    except RecursionError:
        raise ChannelBroken("an answer nested too deep to read")
    except ValueError as exc:
        raise ChannelBroken("an answer that is not JSON ({})".format(str(exc)[:120]))
    if not isinstance(value, dict):
        raise ChannelBroken("an answer that is not a JSON object")
    if not depth_ok(value):
        raise ChannelBroken("an answer nested deeper than {}".format(MAX_DEPTH))
    return value


class Child:
    """A process of the code under test, spoken to over the channel. `preexec` runs in the child
    before exec (to become the side's user); `log_path` receives its stdout and stderr."""

    def __init__(self, argv, env, cwd, log_path, preexec=None, what="the process"):
        self.what = what
        self.buffer = b""
        self.ended = False
        cmd_r, cmd_w = os.pipe()
        ans_r, ans_w = os.pipe()
        self.log = open(log_path, "ab")
        env = dict(env, PERFMINE_CHANNEL="{},{}".format(cmd_r, ans_w))
        try:
            self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=self.log,
                                         stderr=subprocess.STDOUT, pass_fds=(cmd_r, ans_w), preexec_fn=preexec,
                                         start_new_session=True)
        finally:
            os.close(cmd_r)
            os.close(ans_w)
        own(self.proc.pid)
        self.cmd_w = cmd_w
        self.ans_r = ans_r

    def send(self, request):
        """A request; a process that no longer reads is a broken channel."""
        data = (json.dumps(request) + "\n").encode("utf-8")
        try:
            while data:
                n = os.write(self.cmd_w, data)
                data = data[n:]
        except OSError:
            raise ChannelBroken("{} stopped reading its requests".format(self.what))

    def _line(self, deadline):
        while b"\n" not in self.buffer:
            if len(self.buffer) > MAX_LINE:
                raise ChannelBroken("an answer longer than {} bytes".format(MAX_LINE))
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise ChannelTimeout("{} gave no answer in time".format(self.what))
            ready, _, _ = select.select([self.ans_r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.ans_r, 1 << 16)
            if not chunk:
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        if len(line) > MAX_LINE:
            raise ChannelBroken("an answer longer than {} bytes".format(MAX_LINE))
        return line

    def pending(self):
        """Whether anything was written that no request asked for yet (read without waiting)."""
        if self.buffer:
            return True
        ready, _, _ = select.select([self.ans_r], [], [], 0)
        if not ready:
            return False
        chunk = os.read(self.ans_r, 1 << 16)
        if not chunk:
            return False
        self.buffer += chunk
        return True

    def receive(self, kind, timeout, request=None):
        """The one answer of `kind` to the request just sent (or to the start, request None). Anything
        else breaks the channel; so does a line that was already waiting when the request went."""
        line = self._line(time.monotonic() + timeout)
        if line is None:
            code = self.wait(5)
            raise ChannelBroken("{} ended ({}) before it answered{}".format(
                self.what, describe(code), "" if request is None else " " + summary(request)))
        answer = parse_line(line)
        if answer.get("kind") != kind:
            raise ChannelBroken("{} answered {!r} where {!r} was due".format(self.what, str(answer.get("kind"))[:40], kind))
        return answer

    def ask(self, request, kind, timeout):
        """send(request) then receive(kind): an answer written before the request breaks the channel."""
        if self.pending():
            raise ChannelBroken("{} wrote an answer before it was asked ({})".format(self.what, summary(request)))
        self.send(request)
        return self.receive(kind, timeout, request)

    def finish(self, timeout):
        """After the final answer: the process's exit status (None: killed), and nothing more may have
        come by then. Only the process itself is waited for (a process it left behind may hold the
        pipe open: what it writes later is never read)."""
        try:
            os.close(self.cmd_w)
        except OSError:
            pass
        code = self.wait(timeout)
        if self.pending():
            raise ChannelBroken("{} wrote after its final answer".format(self.what))
        return code

    def wait(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass

    def close(self):
        for fd in (self.cmd_w, self.ans_r):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.proc.poll() is None:
            self.kill()
        self.log.close()


def describe(code):
    if code is None:
        return "killed"
    if code < 0:
        try:
            return "died of {}".format(signal.Signals(-code).name)
        except ValueError:
            return "died of signal {}".format(-code)
    return "exit {}".format(code)


def summary(request):
    return ", ".join("{}={}".format(k, str(v)[:60]) for k, v in sorted(request.items()) if k != "args")[:200]


def open_channel():
    """The child's end: (requests file, answer function). The descriptors leave the environment so
    that nothing the child starts inherits their names."""
    spec = os.environ.pop("PERFMINE_CHANNEL", None)
    if not spec:
        raise SystemExit("PERFMINE_CHANNEL is not set: this program is run by perfmine's verifier")
    cmd_fd, ans_fd = (int(x) for x in spec.split(","))
    os.set_inheritable(cmd_fd, False)
    os.set_inheritable(ans_fd, False)
    requests = os.fdopen(cmd_fd, "rb", buffering=0)

    def answer(obj):
        data = (json.dumps(obj, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")
        while data:
            n = os.write(ans_fd, data)
            data = data[n:]

    def request():
        line = b""
        while not line.endswith(b"\n"):
            chunk = requests.readline()
            if not chunk:
                return None
            line += chunk
        return json.loads(line.decode("utf-8"))

    return request, answer
