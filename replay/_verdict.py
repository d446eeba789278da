"""Copied into the sandbox as ``engram_verdict``: the harness side of a run, which reports
test outcomes on a pipe the harness opened, never on the tested code's stdout.

At import, before any tested code runs, it reads a one-time nonce from a pipe (the
harness wrote it and closed its end; the read consumes it) and forgets the environment
variable naming the pipes. Each outcome line carries the nonce, so printing a marker,
exiting early or writing to the wrong descriptor proves nothing. As a pytest plugin
(``-p engram_verdict``) it reports every test's outcome; run as a script
(``engram_verdict.py CODE TESTS_JSON``) it is CodeIF-Bench's harness: the code, then
each assert run on its own in the code's namespace, the passed indices sent at the end.
This file is copied, never imported by engram itself."""

import contextlib
import json
import os
import sys

_fds = os.environ.pop("ENGRAM_VERDICT_FDS", "")


def _channel():
    try:
        read_fd, write_fd = (int(x) for x in _fds.split(","))
        chunks = []
        while True:
            chunk = os.read(read_fd, 64)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(read_fd)
    except (ValueError, OSError):
        return lambda _line: None
    nonce = b"".join(chunks).decode()
    write = os.write

    def send(line):
        with contextlib.suppress(OSError):
            write(write_fd, f"{nonce}\t{line}\n".encode())

    return send


_send = _channel()
del _channel


def pytest_runtest_logreport(report):
    if report.failed:
        _send(f"fail\t{report.nodeid}")
    elif report.when == "call" and report.passed:
        _send(f"pass\t{report.nodeid}")


def pytest_collectreport(report):
    if report.failed:
        _send(f"fail\t{report.nodeid}")


def _asserts(code_path, tests_path):
    with open(tests_path, encoding="utf-8") as handle:
        tests = json.load(handle)
    with open(code_path, encoding="utf-8") as handle:
        code = compile(handle.read(), code_path, "exec")
    namespace = {"__name__": "__main__", "__file__": code_path, "__builtins__": __builtins__}
    exec(code, namespace)
    passed = []
    for index, test in enumerate(tests):
        try:
            exec(test, namespace)
            passed.append(index)
        except Exception:
            pass
    _send("passed\t" + json.dumps(passed))


if __name__ == "__main__":
    sys.path[0] = os.getcwd()
    _asserts(sys.argv[1], sys.argv[2])
