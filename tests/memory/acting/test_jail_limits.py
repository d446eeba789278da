"""The launcher of ``memory.acting.jail.limits``: the command it starts runs under the rlimits,
and a command that cannot start says so with status 127."""

from __future__ import annotations

import json
import subprocess
import sys

from memory.acting.jail.limits import limited

SHOW = ("import json, resource; print(json.dumps([resource.getrlimit(getattr(resource, n))"
        " for n in ('RLIMIT_CPU', 'RLIMIT_AS', 'RLIMIT_FSIZE', 'RLIMIT_CORE')]))")


def test_the_command_inherits_the_limits():
    argv = limited([sys.executable, "-c", SHOW], timeout=7.5, memory_bytes=3 << 30,
                   file_bytes=5 << 20)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [[8, 8], [3 << 30] * 2, [5 << 20] * 2, [0, 0]]


def test_a_file_over_the_size_limit_is_cut(tmp_path):
    write = "open('big', 'wb').write(b'x' * 300_000)"
    argv = limited([sys.executable, "-c", write], timeout=10, memory_bytes=2 << 30,
                   file_bytes=100_000)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode != 0  # Python ignores SIGXFSZ: the write fails (EFBIG)
    assert (tmp_path / "big").stat().st_size <= 100_000


def test_a_command_that_cannot_start():
    argv = limited(["/nonexistent/tool", "x"], timeout=5, memory_bytes=1 << 30,
                   file_bytes=1 << 20)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 127
    assert "cannot run /nonexistent/tool: No such file or directory" in done.stderr
