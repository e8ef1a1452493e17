"""perfmine's account of a side's CPU time from outside its processes, for a verifier run as root.

Every side of a verifier's measurement runs as a user of its own (a uid no other process uses), so
that "the side" is a set the kernel keeps: every process of that uid, however it was started
(a child, a grandchild re-parented by a double fork, a new session made by setsid). This module

  - makes this process the child subreaper (prctl PR_SET_CHILD_SUBREAPER): an orphan of any
    side is re-parented here, not to the container's init, so its CPU time cannot be lost when it
    exits; `Reaper.reap()` collects the zombies that are not this process's own workers and
    charges their rusage (which includes their own waited-for children) to their uid;
  - stops a side whole between its batches (`UidAccount.stop()`: a child that became that uid
    sends SIGSTOP to -1, which the kernel delivers to every process of the uid at once, a fork in
    progress included) and continues it for its own batches only (`cont()`), so nothing of a side
    runs, or works ahead, while another side is measured;
  - counts a side's CPU time (`cpu()`), read while the side is stopped, so that the reading is
    exact: the process CPU clock of every process of the uid (clock_gettime on the pid's
    CLOCK_SCHED clock, nanoseconds, every thread, dead threads included), plus the CPU time of the
    children they have waited for (cutime + cstime), plus what the reaper charged to the uid.

A process of the uid cannot leave it: the sides' processes run with no_new_privs (a setuid
program gives them no other uid), and the verifier starts nothing else under these uids.

Python 3.8+, Linux, standard library only.
"""

import os
import signal
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
CPUCLOCK_SCHED = 2
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
#: How long stop() waits for every process of the uid to be stopped before it reads anyway.
STOP_WAIT = 2.0


def prctl(option, value):
    """prctl(2) through libc; False where it cannot be called."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def no_new_privs():
    """In a child before exec: setuid and file-capability programs give it nothing."""
    prctl(PR_SET_NO_NEW_PRIVS, 1)


def process_clock(pid):
    """The CPU time of a process (all its threads, dead ones included), in seconds, or None."""
    try:
        return time.clock_gettime(((~pid) << 3) | CPUCLOCK_SCHED)
    except (OSError, OverflowError):
        return None


def read_stat(pid):
    """(state, ppid, cutime + cstime in seconds) of a process, or None once it is gone."""
    try:
        with open("/proc/{}/stat".format(pid), "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return fields[0].decode(), int(fields[1]), (int(fields[13]) + int(fields[14])) / TICKS
    except (OSError, IndexError, ValueError):
        return None


def read_uids(pid):
    """(real, effective, saved, filesystem) uids of a process, or None."""
    try:
        with open("/proc/{}/status".format(pid), "rb") as f:
            for line in f:
                if line.startswith(b"Uid:"):
                    return tuple(int(x) for x in line.split()[1:5])
    except (OSError, ValueError):
        return None
    return None


#: The pids of children this process waits for itself (a subprocess.Popen's): never reaped here.
OWN = set()


def own(pid):
    OWN.add(pid)


def released(pid):
    OWN.discard(pid)


def pids():
    return [int(e) for e in os.listdir("/proc") if e.isdigit()]


def processes_of(uid):
    """The processes one of whose uids is uid (a setuid program keeps its real uid)."""
    found = []
    for pid in pids():
        uids = read_uids(pid)
        if uids is not None and uid in uids:
            found.append(pid)
    return found


def as_user(uid, gid, action):
    """Runs action() in a child that has become uid (its groups dropped); waits for it."""
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        code = 0
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            action()
        except BaseException:  # noqa: B036 - the child must not return into the caller
            code = 1
        os._exit(code)
    while True:
        try:
            os.waitpid(child, 0)
            return
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def signal_all(uid, gid, sig):
    """kill(-1, sig) as uid: the kernel delivers sig to every process of the uid at once."""

    def send():
        try:
            os.kill(-1, sig)
        except ProcessLookupError:
            pass

    as_user(uid, gid, send)


class Reaper:
    """This process as the child subreaper of everything it starts. `own` (a callable returning a
    set of pids; by default those registered with own()) names the children a subprocess.Popen
    here waits for; every other zombie child is reaped and its rusage charged to its real uid."""

    def __init__(self, own=lambda: OWN):
        self.enabled = prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.own = own
        self.charged = {}
        self.reaped = 0

    def reap(self):
        me = os.getpid()
        mine = self.own()
        for pid in pids():
            if pid in mine:
                continue
            stat = read_stat(pid)
            if stat is None or stat[1] != me or stat[0] not in ("Z", "X"):
                continue
            uids = read_uids(pid)
            try:
                done, _, usage = os.wait4(pid, os.WNOHANG)
            except (ChildProcessError, OSError):
                continue
            if done == pid:
                self.reaped += 1
                if uids is not None:
                    self.charged[uids[0]] = self.charged.get(uids[0], 0.0) + usage.ru_utime + usage.ru_stime

    def close(self):
        """No longer the subreaper (orphans go to init again)."""
        if self.enabled:
            prctl(PR_SET_CHILD_SUBREAPER, 0)
            self.enabled = False


class UidAccount:
    """One side's processes: every process of `uid`. Stopped and continued as one, counted as one."""

    def __init__(self, uid, gid, reaper):
        self.uid = uid
        self.gid = gid
        self.reaper = reaper
        self.running = True

    def stop(self):
        """Stops every process of the uid, and waits until none of them runs any more."""
        signal_all(self.uid, self.gid, signal.SIGSTOP)
        self.running = False
        deadline = time.monotonic() + STOP_WAIT
        while time.monotonic() < deadline:
            busy = False
            for pid in processes_of(self.uid):
                stat = read_stat(pid)
                if stat is not None and stat[0] not in ("T", "t", "Z", "X"):
                    busy = True
                    break
            if not busy:
                return
            time.sleep(0.0005)

    def cont(self):
        self.running = True
        signal_all(self.uid, self.gid, signal.SIGCONT)

    def kill(self):
        """SIGKILL to every process of the uid (then SIGCONT, so that stopped ones die too)."""
        signal_all(self.uid, self.gid, signal.SIGKILL)
        signal_all(self.uid, self.gid, signal.SIGCONT)

    def cpu(self):
        """Seconds of CPU time of the uid's processes so far: live ones (and their waited-for
        children), plus the orphans the reaper charged to the uid."""
        self.reaper.reap()
        total = self.reaper.charged.get(self.uid, 0.0)
        for pid in processes_of(self.uid):
            stat = read_stat(pid)
            if stat is None:
                continue
            clock = process_clock(pid)
            total += (clock or 0.0) + stat[2]
        return total

    def census(self):
        """The uid's processes now: [(pid, ppid, state)]."""
        out = []
        for pid in processes_of(self.uid):
            stat = read_stat(pid)
            if stat is not None:
                out.append((pid, stat[1], stat[0]))
        return out
