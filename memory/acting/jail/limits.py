"""Resource limits put on a jailed command by a launcher process, not by a ``preexec_fn``.

Python code run between fork and exec in a multithreaded process (a replay's worker
threads, the app's) can deadlock on a lock another thread held at the fork; a pytest
worker hung 13 minutes that way. So the child execs at once into a short ``python -I -S``
launcher which joins the run's pids cgroup (when there is one), sets the rlimits (CPU
time, address space, file size, no core files) and execs the command, which inherits
them; bwrap and everything it starts stay under them.
"""

from __future__ import annotations

import sys

_LAUNCH = (
    "import os, resource, sys\n"
    "procs, cpu, memory, size = sys.argv[1:5]\n"
    "if procs:\n"
    "    fd = os.open(procs, os.O_WRONLY)\n"
    "    os.write(fd, b'0')\n"
    "    os.close(fd)\n"
    "for which, value in ((resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, memory),\n"
    "                     (resource.RLIMIT_FSIZE, size), (resource.RLIMIT_CORE, '0')):\n"
    "    resource.setrlimit(which, (int(value), int(value)))\n"
    "try:\n"
    "    os.execvp(sys.argv[5], sys.argv[5:])\n"
    "except OSError as exc:\n"
    "    sys.stderr.write(f'cannot run {sys.argv[5]}: {exc.strerror}\\n')\n"
    "    sys.exit(127)\n")


def limited(argv: list[str], *, timeout: float, memory_bytes: int, file_bytes: int,
            cgroup_procs: str | None = None) -> list[str]:
    """``argv`` started under the limits: CPU time ``timeout`` + 1 s, the address space
    and file size given, no core dumps, in the pids cgroup whose ``cgroup.procs`` is
    ``cgroup_procs`` (if any)."""
    cpu = int(timeout) + 1
    return [sys.executable, "-I", "-S", "-c", _LAUNCH, cgroup_procs or "", str(cpu),
            str(memory_bytes), str(file_bytes), *argv]
