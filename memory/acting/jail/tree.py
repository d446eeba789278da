"""A command run in the jail on a copy of a working tree (the ``run`` tool's ``Jail``).

Each run gets a fresh temp dir holding ``work`` (a copy of the files git tracks or would
track: ignored files, ``.git`` and the developer's virtualenvs stay out), ``home`` and
``tmp``; bubblewrap (``memory.acting.jail.bwrap``) makes it the only writable tree, with no
network, uid 65534, a private ``/tmp``; the developer's home is not mounted. Limits:
a wall-clock timeout (the process group killed, and with bwrap's pid 1 everything in
the jail), address space, file size and CPU time (rlimits, set by the launcher of
``limits.limited`` before bwrap starts), a process count (set inside by a one-line
launcher: the kernel counts it per user namespace; for root, a pids cgroup). Output
goes to files outside the jail, so a flood is bounded by the file size limit, and only
its tails are read. Nothing is written back; the temp dir is removed after the run.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memory.acting.jail import bwrap
from memory.acting.jail.limits import limited
from memory.acting.tools._git import files
from memory.acting.tools.run import CommandResult, Limits

READ_TAIL = 200_000  # bytes of each output file read back
LAUNCH = ("import os, resource, sys\n"
          "n = int(sys.argv[1])\n"
          "resource.setrlimit(resource.RLIMIT_NPROC, (n, n))\n"
          "os.execvp(sys.argv[2], sys.argv[2:])\n")


def command_env(home: Path, tmp: Path) -> dict[str, str]:
    """The whole environment a command gets in the jail: nothing of the caller's (no
    secrets, no COLUMNS, CI or PYTEST_ADDOPTS changing what a tool prints). No pytest
    plugin of engram's own environment loads by itself either (as in replay's sandbox):
    they are not the project's, and hypothesis and textual's snapshots made a ``pytest``
    start cost 3.8 instead of 0.6 CPU s."""
    return {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(home),
            "TMPDIR": str(tmp), "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


class TreeJail:
    """Runs commands on a copy of a repository's working tree, inside bubblewrap."""

    def available(self) -> str | None:
        return bwrap.available()

    def copy(self, root: Path, work: Path, limit: int) -> None:
        """The working tree's files into ``work``; ``ValueError`` if over ``limit`` bytes."""
        names = files(root)
        sizes = {}
        for name in names:
            try:
                info = os.lstat(root / name)
            except OSError:
                continue  # deleted in the work tree
            sizes[name] = info.st_size
        total = sum(sizes.values())
        if total > limit:
            raise ValueError(f"the working tree holds {total:,} bytes, over the "
                             f"{limit:,}-byte limit for a copy into the sandbox")
        for name in sizes:
            source, target = root / name, work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():
                os.symlink(os.readlink(source), target)
            elif source.is_file():
                shutil.copy2(source, target)

    def run(self, root: Path, argv: list[str], limits: Limits) -> CommandResult:
        why = self.available()
        if why is not None:
            raise OSError(f"the jail does not work here: {why}")
        with tempfile.TemporaryDirectory(prefix="engram-run-") as outside, \
                tempfile.TemporaryDirectory(prefix="engram-jail-") as temp:
            base = Path(temp).resolve()
            work = base / "work"
            for sub in ("work", "home", "tmp"):
                (base / sub).mkdir()
            self.copy(Path(root), work, limits.copy_bytes)
            command = [sys.executable, "-S", "-c", LAUNCH, str(limits.processes), *argv]
            out_path, err_path = Path(outside) / "stdout", Path(outside) / "stderr"
            return self._run(base, work, argv, command, limits, out_path, err_path)

    def _run(self, base: Path, work: Path, argv: list[str], command: list[str],
             limits: Limits, out_path: Path, err_path: Path) -> CommandResult:
        env = command_env(base / "home", base / "tmp")
        cgroup = bwrap.PidsCgroup(limits.processes)

        launch = limited(bwrap.argv(base, work, command), timeout=limits.timeout,
                         memory_bytes=limits.memory_bytes, file_bytes=limits.file_bytes,
                         cgroup_procs=cgroup.procs)
        started = time.monotonic()
        timed_out = False
        try:
            with out_path.open("wb") as out, err_path.open("wb") as err:
                proc = subprocess.Popen(launch, cwd=work, env=env,
                                        stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                        start_new_session=True)
                try:
                    proc.wait(timeout=limits.timeout)
                except subprocess.TimeoutExpired:
                    timed_out = True
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        finally:
            cgroup.close()
        return CommandResult(tuple(argv), proc.returncode, timed_out, _tail(out_path),
                             _tail(err_path), time.monotonic() - started, "bwrap")


def _tail(path: Path) -> str:
    with path.open("rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(0, size - READ_TAIL))
        return fh.read().decode("utf-8", "replace")
