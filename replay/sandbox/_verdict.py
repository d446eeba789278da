"""Copied into the sandbox as ``engram_verdict``: the child side of one test, started by
the runner (``engram_runner.py``), which alone decides the verdict.

At import, before any tested code runs, it reads its payload (a one-time token, and for
asserts the code's path and one test) from a pipe the runner wrote and closed, closes
it, and forgets the variable naming it. As a pytest plugin (``-p engram_verdict``) it
reports each test's outcome on the report pipe, each line headed by the token, and a
``done`` line at the end of the session. Run as a script it is one test of CodeIF-Bench's
harness: the code as a module, then the test in its namespace (with the builtins and
the trace hooks as they were before the code ran), and the token written back only if
both ran through. This file is copied, never imported by engram itself.
"""

import builtins
import os
import sys


def _take():
    """(payload lines: the token, then for asserts the code's path and the test; report
    fd), each once: the payload pipe is read to its end and closed."""
    fds = os.environ.pop("ENGRAM_VERDICT_FDS", "")
    try:
        read_fd, write_fd = (int(x) for x in fds.split(","))
        chunks = []
        while chunk := os.read(read_fd, 65536):
            chunks.append(chunk)
        os.close(read_fd)
        return b"".join(chunks).decode("utf-8").split("\n", 2), write_fd
    except (ValueError, OSError):
        return None, -1


def _one_test():
    """The asserts child (started with ``-S``): the guard first, then the payload; nothing
    is left at module level for the tested code to call."""
    import sitecustomize  # noqa: F401 - the guard, which -S does not load

    payload, report = _take()
    run, compile_, write, leave = exec, compile, os.write, os._exit
    if payload is None or len(payload) != 3:
        leave(2)
    token, path, test = payload
    sys.path[0] = os.getcwd()
    saved = dict(builtins.__dict__)
    namespace = {"__name__": "__main__", "__file__": path, "__builtins__": builtins}
    try:
        with open(path, encoding="utf-8") as handle:
            code = compile_(handle.read(), path, "exec")
        test = compile_(test, "<test>", "exec")
        del payload
        run(code, namespace)
        sys.settrace(None)
        sys.setprofile(None)
        for name, value in saved.items():
            if builtins.__dict__.get(name) is not value:
                builtins.__dict__[name] = value
        namespace["__builtins__"] = builtins
        run(test, namespace)
    except BaseException:  # any way out of the test is a failure
        try:
            import traceback

            traceback.print_exc()
        except BaseException:
            pass
        _flush()
        leave(1)
    _flush()
    write(report, (token + "\n").encode())
    leave(0)


def _flush():
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass


if __name__ == "__main__":
    _one_test()
else:
    def _reporter():
        import contextlib

        payload, report = _take()
        token = payload[0] if payload else ""
        write = os.write

        def send(kind, text):
            if token:
                with contextlib.suppress(OSError):
                    write(report, f"{token}\t{kind}\t{text}\n".encode())

        def pytest_runtest_logreport(report):
            if report.failed:
                send("fail", report.nodeid)
            elif report.when == "call" and report.passed:
                send("pass", report.nodeid)

        def pytest_collectreport(report):
            if report.failed:
                send("fail", report.nodeid)

        def pytest_sessionfinish(session, exitstatus):
            send("done", str(int(exitstatus)))

        return pytest_runtest_logreport, pytest_collectreport, pytest_sessionfinish

    pytest_runtest_logreport, pytest_collectreport, pytest_sessionfinish = _reporter()
    del _reporter
