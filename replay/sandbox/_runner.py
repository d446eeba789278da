"""Copied into the sandbox as ``engram_runner.py`` and run as the jail's first process
(``python -I -S``: no site, no PYTHONPATH, no work dir on ``sys.path``): the process that
decides verdicts. It never imports the tested code. It reads its job on stdin, runs
each test in a child process of its own (``engram_verdict.py``: the code, then one
assert group; or one pytest target), and writes one result line, headed by the host's
nonce, on a pipe only it holds (children get neither it nor stdin).

What a child must show for its test to pass:
- the one-time token the runner gave it (on a pipe read and closed before any tested
  code ran) written back on its own report pipe after the test, and a normal exit
  (asserts: status 0; pytest: 0 or 1 with a ``done`` line); an early ``os._exit(0)``,
  ``sys.exit(0)``, a crash or the timeout is a failure;
- and the run's check test must not pass: a real test of the run with one expected
  value changed (``engram_check.py``: asserts, one of the run's assert groups with a
  literal changed, run in a child of its own at a random place before the group it
  copies; pytest, a copy of one of the targets' tests beside it in its file, renamed
  alike, run in a process of its own shaped like its original's). It fails for any code
  that passes the real one; a child that passes it while its original passes too forged
  its report (rebound builtins, patched pytest, a report written by the code itself,
  ...): then no test of the run passes. Wrong code may pass the check honestly where it
  fails the original (its value may be the one the check expects): then the check is
  run once more as its re-check, the same literal moved to a third value (or put back),
  which such code fails too; passing it as well is forged. A child that reports a pass
  for a test it did not run (the check's, or in the check's child the original's) forged
  it.

The runner makes itself non-dumpable first, so no child can read its memory (the
tokens, which test is the check) or take its descriptors through ``/proc`` or ptrace.
What this cannot rule out is in replay/sandbox.py's docstring. This file is copied,
never imported by engram itself.
"""

import contextlib
import ctypes
import importlib.util
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
REPORT_LIMIT = 4 * 1024 * 1024  # bytes read from one child's report pipe
HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "engram_verdict.py")
ZYGOTE = os.path.join(HERE, "zygote", "engram_zygote.py")


def _load_check():
    """``engram_check.py`` beside this file, by path (``-I``: no script dir on the path)."""
    spec = importlib.util.spec_from_file_location("engram_check",
                                                  os.path.join(HERE, "engram_check.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = _load_check()


def _token():
    return os.urandom(16).hex()


def _undumpable():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def _subreaper():
    """Whether this process now adopts its descendants' orphans (the zygote's test
    processes, see ``_Zygote``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


class _Adopted:
    """A test process forked by the zygote's fork, which exits at once: then the process
    is this one's child (the subreaper's), waited for here. ``Popen``'s ``pid``,
    ``poll``, ``wait`` and ``returncode``."""

    def __init__(self, pid):
        self.pid = pid
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            try:
                done, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # still the zygote's fork's, for a moment
                return None
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, limit=30.0):
        """Its exit status; None if it was never adopted within ``limit`` seconds (then it
        ended under someone else: a failure)."""
        deadline = time.monotonic() + limit
        while self.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        return self.returncode


class _Zygote:
    """``engram_zygote.py``: one process per run that has imported pytest and forks a
    test process per pytest child; it is handed descriptors only (what a child runs, and
    how it ended, never pass through it: see that file). ``start`` returns the test
    process, or None when the zygote is gone or cannot fork (the child then starts as
    a process of its own, as without it)."""

    def __init__(self, env, cwd):
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10.0)  # a zygote stopped or gone: the child starts on its own
        # nothing of the work dir on its path (``-P``, no PYTHONPATH, no user site): what it
        # imports before a fork, every child shares, and the guard is not in place yet
        zenv = {**env, "PYTHONPATH": "", "ENGRAM_ZYGOTE_PYTHONPATH": env.get("PYTHONPATH", ""),
                "ENGRAM_ZYGOTE_FD": str(theirs.fileno())}
        try:
            self.proc = subprocess.Popen([sys.executable, "-s", "-P", ZYGOTE], cwd="/",
                                         env=zenv, stdin=subprocess.DEVNULL,
                                         pass_fds=(theirs.fileno(),))
        except OSError:
            self.proc = None
        finally:
            theirs.close()
        self.replies = self.sock.makefile("rb")

    def start(self, fds):
        if self.proc is None:
            return None
        try:
            socket.send_fds(self.sock, [b"1"], list(fds))
            pid = int(self.replies.readline())
        except (OSError, ValueError):  # gone, or stopped: no second wait for it
            with contextlib.suppress(OSError):
                self.proc.kill()
            self.close()
            return None
        return _Adopted(pid) if pid > 0 else None

    def close(self):
        self.replies.close()
        self.sock.close()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


_zygote = None  # the run's, while a pytest job runs and the runner is a subreaper


def _read_until(fd, proc, deadline):
    """The report pipe's bytes until the child exits (or the deadline); timed out?"""
    chunks, size, eof = [], 0, False
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return b"".join(chunks), True
            watch = [fd] if not eof else []
            if pidfd is not None:
                watch.append(pidfd)
            ready, _, _ = select.select(watch, [], [], remaining if pidfd is not None
                                        else min(remaining, 0.02))
            if fd in ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    eof = True
                elif size < REPORT_LIMIT:
                    chunks.append(chunk)
                    size += len(chunk)
            if proc.poll() is not None:
                while not eof and select.select([fd], [], [], 0)[0]:
                    chunk = os.read(fd, 65536)
                    eof = not chunk
                    if chunk and size < REPORT_LIMIT:
                        chunks.append(chunk)
                        size += len(chunk)
                return b"".join(chunks), False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _child(argv, payload, env, cwd, timeout, pytest_args=None):
    """Run one child, ``payload`` (its token first, a line of its own) on its payload
    pipe: (exit status or None, timed out, report bytes). ``pytest_args``: a pytest
    child, forked by the run's zygote when there is one (``argv`` otherwise)."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    proc = None
    if pytest_args is not None and _zygote is not None:
        args_r, args_w = os.pipe()
        try:
            proc = _zygote.start((in_r, out_w, args_r))
        finally:
            os.close(args_r)
        if proc is not None:
            with contextlib.suppress(OSError):
                os.write(args_w, json.dumps({"cwd": cwd, "guard": HERE,
                                             "args": pytest_args}).encode())
        os.close(args_w)
    if proc is None:
        try:
            proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                                    pass_fds=(in_r, out_w),
                                    env={**env, "ENGRAM_VERDICT_FDS": f"{in_r},{out_w}"},
                                    start_new_session=True)
        except OSError as exc:
            for fd in (in_r, in_w, out_r, out_w):
                os.close(fd)
            sys.stderr.write(f"engram runner: cannot start a test: {exc}\n")
            return None, False, b""
    os.close(in_r)
    os.close(out_w)
    with contextlib.suppress(OSError):
        os.write(in_w, payload.encode())
    os.close(in_w)
    report, timed_out = _read_until(out_r, proc, time.monotonic() + timeout)
    os.close(out_r)
    if timed_out or proc.poll() is None:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):  # a test process killed before its setsid
            os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return proc.returncode, timed_out, report


def _lines(report, token):
    out = []
    for line in report.decode("utf-8", "replace").splitlines():
        fields = line.split("\t", 2)
        if len(fields) == 3 and fields[0] == token:
            out.append((fields[1], fields[2]))
    return out


def run_asserts(job, env, cwd):
    """Each assert group (and the check) in a child started without ``site`` (most of a
    start-up here): the guard is imported by the harness, site-packages given on the path."""
    tests = list(job["tests"])
    path = os.pathsep.join(p for p in (env.get("PYTHONPATH", ""), *job.get("site", ())) if p)
    env = {**env, "PYTHONPATH": path}
    copied, check_test, kind, recheck = check.assert_check(tests)
    order = [*range(len(tests))]
    order.insert(check.below((len(tests) if copied is None else copied) + 1), None)
    passed, checked, timed_out = [], False, False

    def one(test):
        nonlocal timed_out
        token = _token()
        status, late, report = _child([sys.executable, "-S", HARNESS],
                                      f"{token}\n{job['code']}\n{test}", env, cwd,
                                      job["timeout"])
        timed_out |= late
        return status == 0 and not late and report == (token + "\n").encode()

    for index in order:
        ok = one(check_test if index is None else tests[index])
        if index is None:
            checked = ok
        elif ok:
            passed.append(str(index))
    forged = checked and (copied is None or str(copied) in passed)
    if checked and not forged:  # its original failed: honestly only if the re-check fails
        forged = one(recheck)
    return {"passed": [] if forged else passed, "failed": [], "forged": forged,
            "timed_out": timed_out, "check": kind}


def _constant_check(cwd, first):
    """The last resort: a file of one failing test beside the first target's file."""
    folder = os.path.join(cwd, os.path.dirname(first.split("::")[0]))
    if not os.path.isdir(folder) or not check.inside(cwd, folder):
        folder = cwd
    while True:
        name = f"test_{os.urandom(4).hex()}"
        path = os.path.join(folder, name + ".py")
        if not os.path.exists(path):
            break
    a = 2 + check.below(10**6)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(f"def {name}():\n    assert {a} == {a + 1 + check.below(10**6)}\n")
    node = f"{os.path.relpath(path, cwd)}::{name}"
    return {"file": None, "check": node, "original": None, "name": None, "target": None,
            "kind": "constant"}


def run_pytest(job, env, cwd):
    """Each target in a pytest process of its own, and the check in one more, at a
    random place among them."""
    targets = list(job["targets"])
    plan = check.pytest_check(targets, cwd)
    if plan is None:
        plan = _constant_check(cwd, targets[0])
    else:  # its bytes kept as they were (line ends, encoding), then the twin written
        with open(os.path.join(cwd, plan["file"]), "rb") as handle:
            pristine = handle.read()
        with open(os.path.join(cwd, plan["file"]), "w", encoding="utf-8") as handle:
            handle.write(plan["source"])
    global _zygote
    if _subreaper():
        _zygote = _Zygote(env, cwd)
    try:
        return _pytest_children(job, env, cwd, targets, plan)
    finally:  # the test file as it was (the check's file gone); the host checks it too
        if _zygote is not None:
            _zygote.close()
            _zygote = None
        if plan["file"] is None:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(cwd, plan["check"].split("::")[0]))
        else:
            with open(os.path.join(cwd, plan["file"]), "wb") as handle:
                handle.write(pristine)


def _pytest_child(job, env, cwd, nodes):
    """One pytest process over ``nodes``: (its report lines, whether it ended well, timed
    out)."""
    token = _token()
    args = ["-q", "-p", "no:cacheprovider", "-p", "engram_verdict", "--maxfail=0",
            "--rootdir", cwd, *nodes]
    status, late, report = _child([sys.executable, "-m", "pytest", *args], token, env, cwd,
                                  job["timeout"], pytest_args=args)
    lines = _lines(report, token)
    return lines, status in (0, 1) and not late and any(k == "done" for k, _ in lines), late


def _check_nodes(targets, plan):
    return [plan["check"]] if plan["target"] is None else \
        check.argv(targets[plan["target"]], plan, True)


def _pytest_children(job, env, cwd, targets, plan):
    """Each target's child and the check's; then, when the check passed where its original
    failed, the re-check's (``engram_check``): forged when the check passed and its
    original did too (in the same parameter), or the re-check passed as well; and when a
    child reports a pass for a test it did not run (the check, outside the check's child;
    the original, in it)."""
    order = [*range(len(targets))]
    order.insert(check.below(len(targets) + 1), None)
    passed, failed, forged, timed_out = set(), set(), False, False
    original, checks, originals = plan["original"], set(), set()

    def param(test, node):
        return node[len(test):] if test is not None and check.is_test(test, node) else None

    for index in order:
        if index is None:
            nodes = _check_nodes(targets, plan)
        else:
            nodes = [targets[index]] if plan["name"] is None else \
                check.argv(targets[index], plan, False)
        lines, good, late = _pytest_child(job, env, cwd, nodes)
        timed_out |= late
        ran = False
        for kind, node in lines:
            twin, mine = param(plan["check"], node), param(original, node)
            if kind == "pass" and twin is not None:
                if index is None:
                    checks.add(twin)
                else:  # a pass for the check, from a child that did not run it
                    forged = True
            elif kind == "pass" and mine is not None:
                if index is None:  # and for the original, from the check's child
                    forged = True
                else:
                    originals.add(mine)
            if twin is not None:
                continue
            if index is None:
                continue
            target = targets[index]
            node = node if plan["name"] is None else check.as_reported(node, plan)
            if not check.covers(target, node):
                continue
            if kind == "pass" and good:
                passed.add(node)
                ran = True
            elif kind == "fail":
                failed.add(node)
                ran = True
        if index is not None and (not good or not ran):
            failed.add(targets[index])
    forged |= bool(checks & originals) if original is not None else bool(checks)
    doubt = checks - originals
    if doubt and not forged and original is not None:
        forged = _rechecked(job, env, cwd, targets, plan, doubt)
    if forged:
        passed, failed = set(), set(targets)
    return {"passed": sorted(passed), "failed": sorted(failed), "forged": forged,
            "timed_out": timed_out, "check": plan["kind"]}


def _rechecked(job, env, cwd, targets, plan, doubt):
    """Whether the re-check (the twin's literal moved once more, or put back) passes in a
    parameter of ``doubt`` too, or the child reports its original passing: the check's
    child run again with the re-check as the twin. Code whose original failed honestly
    fails it, as it cannot equal two values (nor pass a test it failed)."""
    with open(os.path.join(cwd, plan["file"]), "w", encoding="utf-8") as handle:
        handle.write(plan["recheck"])
    lines, _, _ = _pytest_child(job, env, cwd, _check_nodes(targets, plan))
    return any(kind == "pass" and (
        check.is_test(plan["original"], node)
        or (check.is_test(plan["check"], node) and node[len(plan["check"]):] in doubt))
        for kind, node in lines)


def main():
    _undumpable()
    out_fd = int(os.environ.pop("ENGRAM_RUNNER_FD"))
    job = json.loads(sys.stdin.buffer.read())
    env = dict(os.environ)
    cwd = os.getcwd()
    result = (run_asserts if job["mode"] == "asserts" else run_pytest)(job, env, cwd)
    if result["forged"]:
        sys.stderr.write("engram runner: the check test passed, so the tested code forged "
                         "its reports: no test of this run passes\n")
    os.write(out_fd, f"{job['nonce']}\t{json.dumps(result)}\n".encode())
    os.close(out_fd)


if __name__ == "__main__":
    main()
