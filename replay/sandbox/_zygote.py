"""Copied into the sandbox as ``zygote/engram_zygote.py`` and started by the runner
(``engram_runner.py``) once per run, on the first pytest target: a process that has
imported pytest and nothing of the run, and forks one process per pytest child. A
child then pays for its own collection and tests only, not for importing pytest again
(a trivial test: 0.54 CPU s as a fresh ``python -m pytest``, 0.17 s forked from here).

It never learns what a child runs or how it ended, since every later child is a copy of
its memory: the runner sends it three descriptors and one byte per child (the payload
pipe the verdict plugin reads its token from, the report pipe, and a pipe holding the
child's pytest arguments), and it forks; that fork forks the test process, sends the
test process's pid to the runner and exits, so the test process is reparented to the
runner (a child subreaper), which alone reads its arguments' pipe's other end, waits
for it and sees its exit status. The zygote, started with ``site`` but without the guard
(not on its path), is non-dumpable; the test process makes itself dumpable again, reads
its arguments, puts the guard's directory and its working directory on ``sys.path``
where ``python -m pytest`` has them, having imported the guard first, by its path
(``sitecustomize``: the audit hook, which refuses forking from then on), and runs pytest
in-process. Nothing of the work dir is on the zygote's own path. This file is
copied, never imported by engram itself.
"""

import ctypes
import json
import os
import socket
import sys

PR_SET_DUMPABLE = 4
_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)

import contextlib  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402

import pytest  # noqa: E402

# what pytest.main imports as it starts, ahead of every fork (some versions lack some)
for _name in ("_pytest.config", "_pytest.faulthandler", "_pytest.fixtures",
              "_pytest.helpconfig", "_pytest.junitxml", "_pytest.main", "_pytest.pastebin",
              "_pytest.python", "_pytest.runner", "_pytest.setuponly", "_pytest.setupplan",
              "_pytest.skipping", "_pytest.terminal", "_pytest.threadexception",
              "_pytest.tracemalloc", "_pytest.unittest", "_pytest.unraisableexception",
              "_pytest.warnings", "pdb"):
    with contextlib.suppress(ImportError):
        importlib.import_module(_name)
del _name


def _read_all(fd):
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    os.close(fd)
    return b"".join(chunks)


def _test_process(control, payload, report, arguments):
    """The test process: never returns."""
    code = 2
    try:
        control.close()
        os.setsid()
        _LIBC.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
        job = json.loads(_read_all(arguments))
        cwd, guard, args = job["cwd"], job["guard"], list(job["args"])
        del job
        os.chdir(cwd)
        path = os.environ.pop("ENGRAM_ZYGOTE_PYTHONPATH", "")
        os.environ["PYTHONPATH"] = path
        os.environ["ENGRAM_VERDICT_FDS"] = f"{payload},{report}"
        # the guard first, by its path (as site imports it, before any of the run's code
        # can be on the path), then ``python -m pytest``'s path: the work dir, PYTHONPATH
        spec = importlib.util.spec_from_file_location(
            "sitecustomize", os.path.join(guard, "sitecustomize.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["sitecustomize"] = module
        spec.loader.exec_module(module)
        del spec, module
        sys.path[0:0] = [cwd, *(p for p in path.split(os.pathsep) if p)]
        sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py"), *args]
        code = int(pytest.main(args))
    except SystemExit as exc:
        code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        code = 3
    try:
        import atexit

        if "threading" in sys.modules:  # as the interpreter ends: threads joined, then atexit
            sys.modules["threading"]._shutdown()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def main():
    control = socket.socket(fileno=int(os.environ.pop("ENGRAM_ZYGOTE_FD")))
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 1, 3)
        except OSError:
            return
        if not message or len(fds) != 3:
            for fd in fds:
                os.close(fd)
            return
        try:
            between = os.fork()
        except OSError:
            between = -1
        if between == 0:
            test = -1
            try:
                test = os.fork()
                if test == 0:
                    _test_process(control, *fds)
            except OSError:
                pass
            finally:
                try:
                    control.sendall(f"{test}\n".encode())
                finally:
                    os._exit(0)
        for fd in fds:
            os.close(fd)
        if between < 0:
            control.sendall(b"-1\n")
        else:
            os.waitpid(between, 0)


if __name__ == "__main__":
    main()
