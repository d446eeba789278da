"""Installed as ``sitecustomize`` inside the sandbox: an audit hook refusing what the
code under test must not do — write, delete or rename outside the sandbox root,
open network connections, start processes. This file is copied, never imported
by engram itself."""

import contextlib
import os
import resource
import sys

_ROOT = os.path.realpath(os.environ.get("ENGRAM_SANDBOX_ROOT", "/nonexistent-sandbox"))
_DEVICES = {"/dev/null", "/dev/stdout", "/dev/stderr"}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_PATH_EVENTS = {"os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.truncate",
                "os.utime", "shutil.rmtree", "os.chflags", "os.lchflags", "os.mkfifo",
                "os.mknod"}
_TWO_PATH_EVENTS = {"os.rename", "os.link", "os.symlink", "shutil.copyfile", "shutil.move",
                    "shutil.copytree"}
_PROCESS_EVENTS = {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen",
                   "os.fork", "os.forkpty", "pty.spawn"}
_NETWORK_EVENTS = {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg",
                   "socket.getaddrinfo"}


def _inside(path):
    if path is None or isinstance(path, int):
        return True
    try:
        text = os.fsdecode(path)
    except TypeError:
        return True
    real = os.path.realpath(text)
    if real in _DEVICES:
        return True
    return real == _ROOT or real.startswith(_ROOT + os.sep)


def _refuse(what):
    raise PermissionError(f"sandbox: {what} is not allowed")


def _hook(event, args):
    if event == "open":
        path, mode, flags = [*args, None, None, None][:3]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (isinstance(flags, int) and flags & _WRITE_FLAGS)
        if writing and not _inside(path):
            _refuse(f"writing {path!r} outside the sandbox")
    elif event in _PATH_EVENTS:
        if args and not _inside(args[0]):
            _refuse(f"{event} on {args[0]!r} outside the sandbox")
    elif event in _TWO_PATH_EVENTS:
        for path in args[:2]:
            if not _inside(path):
                _refuse(f"{event} on {path!r} outside the sandbox")
    elif event in _PROCESS_EVENTS:
        _refuse(f"starting a process ({event})")
    elif event in _NETWORK_EVENTS:
        address = args[1] if len(args) > 1 else None
        if not (isinstance(address, str | bytes)):  # AF_UNIX paths are files
            _refuse(f"network access ({event})")
        elif not _inside(address):
            _refuse(f"socket {address!r} outside the sandbox")


_NPROC = os.environ.get("ENGRAM_SANDBOX_NPROC", "")
if _NPROC.isdigit():  # inside the OS jail: counted per user namespace, inherited, not raisable
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NPROC, (int(_NPROC), int(_NPROC)))

sys.addaudithook(_hook)
