"""Start the tapped server: ``fork`` and ``exec`` with three pipes, nothing heavier than ``os``.

The tap asked ``subprocess.Popen`` for three pipes, a new process group, SIGPIPE and
SIGXFSZ back to their defaults, every other inherited descriptor closed, and on Linux
``PR_SET_PDEATHSIG`` (the server gets SIGKILL if the tap is killed). This module does
exactly that with ``os.fork`` and ``os.execv``: ``subprocess`` imports threading, signal,
selectors and more, about 10 ms before the server could start, and MCP clients time out
servers that start slowly.

The forwarded signals are blocked from just before the fork until the tap has its
handlers (:meth:`Server.release_signals`): one sent to the tap while it loads its relays
is then forwarded, not the end of the tap. The server starts with the tap's own mask.
"""

from __future__ import annotations

import _signal  # the C half of ``signal``, loaded with the interpreter (``signal`` imports enum)
import _thread
import errno
import os
import sys
import time

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["Server", "FORWARDED"]

#: the signals the tap forwards to the server's process group
FORWARDED = tuple(getattr(_signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT",
                                                 "SIGUSR1", "SIGUSR2") if hasattr(_signal, n))
#: what ``Popen(restore_signals=True)`` gives back their default in the child
_RESTORED = tuple(getattr(_signal, n) for n in ("SIGPIPE", "SIGXFZ", "SIGXFSZ")
                  if hasattr(_signal, n))
_PR_SET_PDEATHSIG = 1
_prctl: list[Callable[..., int] | None] = []  # resolved once, before the first fork


def _libc_prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` (Linux), resolved in the tap so that the child only calls it."""
    if not _prctl:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = _core_prctl()
            except Exception:  # a ctypes core unlike CPython's 3.10-3.13: the usual way
                try:
                    import ctypes

                    fn = ctypes.CDLL(None, use_errno=True).prctl
                except (ImportError, OSError, AttributeError):
                    fn = None
        _prctl.append(fn)
    return _prctl[0]


def _core_prctl() -> Callable[..., int]:
    """``ctypes.CDLL(None, use_errno=True).prctl``, made from ``_ctypes``, the C half of
    ctypes: ``import ctypes`` defines every C type and costs the tap's start about 1.5 ms
    (measured); this is the one function type that call makes (C calling convention,
    errno kept, an int result, arguments converted as ctypes converts them)."""
    import _ctypes

    class Int(_ctypes._SimpleCData):
        _type_ = "i"

    class Prctl(_ctypes.CFuncPtr):
        _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
        _restype_ = Int

    libc = _ctypes.dlopen(None, os.RTLD_LOCAL)  # type: ignore[arg-type]  # None: the program
    return Prctl(_ctypes.dlsym(libc, "prctl"))


def _max_fd() -> int:
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        return 256


def _candidates(file: str) -> list[str]:
    """Where ``exec`` looks for ``file``, in order: ``$PATH`` as ``os.get_exec_path`` reads
    it (which imports warnings), unless the name holds a slash."""
    if os.path.dirname(file):
        return [file]
    return [os.path.join(d, file) for d in os.environ.get("PATH", os.defpath).split(os.pathsep)]


class Server:
    """A started server: its pid, the tap's ends of its stdin, stdout and stderr pipes.

    Use :meth:`start`. ``returncode`` is None while it runs, then its exit code (``-N``
    for signal N, as ``Popen.returncode``); ``started`` is the time its ``exec`` succeeded.
    """

    def __init__(self, pid: int, stdin: int, stdout: int, stderr: int,
                 mask: set[int] | None) -> None:
        self.pid = pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.started = time.time()
        self.returncode: int | None = None
        self._mask = mask  # the tap's signal mask before the fork, until released
        self._stdin_lock = _thread.allocate_lock()
        self._wait_lock = _thread.allocate_lock()

    @classmethod
    def start(cls, command: Sequence[str]) -> Server:
        """Fork and exec ``command``; raise ``OSError`` as ``Popen`` would if it cannot run
        (``[Errno 2] No such file or directory: 'name'``)."""
        args = list(command)
        paths = _candidates(args[0])
        if not args[0]:  # os.execv refuses an empty name; exec finds only folders by it
            code = errno.EACCES if any(os.path.isdir(p) for p in paths) else errno.ENOENT
            raise OSError(code, os.strerror(code), args[0])
        prctl = _libc_prctl()
        top = _max_fd()
        opened: list[int] = []  # closed again if anything fails
        try:
            for _ in range(4):  # close-on-exec: only the ends dup'ed to 0-2 pass on
                opened.extend(os.pipe())
            in_r, in_w, out_r, out_w, err_r, err_w, report_r, report_w = opened
            mask = _signal.pthread_sigmask(_signal.SIG_BLOCK, FORWARDED)
            try:
                pid = os.fork()
            except BaseException:
                _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
                raise
            if pid == 0:  # pragma: no cover - the child, until exec
                _child(args, paths, (in_r, out_w, err_w), report_w, mask, prctl, top)
            for fd in (in_r, out_w, err_w, report_w):  # the child's ends
                opened.remove(fd)
                os.close(fd)
            report = b""
            while True:  # empty at EOF: the exec closed it (close-on-exec)
                part = os.read(report_r, 64)
                if not part:
                    break
                report += part
            opened.remove(report_r)
            os.close(report_r)
            if report:  # the child could not exec: reap it, say why as Popen does
                _reap(pid)
                _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
                num, _, where = report.decode("ascii", "replace").partition(":")
                code = int(num) if num.isdigit() else 0
                raise OSError(code, os.strerror(code), args[0] if where == "exec" else None)
        except BaseException:
            for fd in opened:
                os.close(fd)
            raise
        return cls(pid, in_w, out_r, err_r, mask)

    def release_signals(self) -> None:
        """Unblock the forwarded signals (the tap has its handlers): any that came meanwhile
        are delivered now."""
        if self._mask is not None:
            mask, self._mask = self._mask, None
            _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)

    def poll(self) -> int | None:
        """The exit code once the server has exited (reaping it), else None. Safe from a
        signal handler: if it interrupted a poll, it returns None (as ``Popen.poll``)."""
        if self.returncode is None and self._wait_lock.acquire(False):
            try:
                if self.returncode is None:
                    pid, status = os.waitpid(self.pid, os.WNOHANG)
                    if pid == self.pid:
                        self.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:  # SIGCHLD ignored: reaped already, status unknown
                self.returncode = 0
            finally:
                self._wait_lock.release()
        return self.returncode

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds for the exit (polling as ``Popen.wait`` does)."""
        end = time.monotonic() + timeout
        delay = 0.0005
        while True:
            code = self.poll()
            if code is not None:
                return code
            remaining = end - time.monotonic()
            if remaining <= 0:
                return None
            delay = min(delay * 2, remaining, 0.05)
            time.sleep(delay)

    def close_stdin(self) -> None:
        """Close the server's stdin (once, whoever asks first)."""
        with self._stdin_lock:
            fd, self.stdin = self.stdin, -1
        if fd >= 0:
            os.close(fd)

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the server's process group, or to the server alone if the group
        is gone; nothing once it has exited (reaped, its pid may be another process's)."""
        if self.poll() is not None:
            return
        try:
            os.killpg(self.pid, signum)
        except OSError:
            try:
                os.kill(self.pid, signum)
            except OSError:
                pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _child(args: list[str], paths: list[str], ends: tuple[int, int, int], report: int,
           mask: set[int], prctl: Callable[..., int] | None,
           top: int) -> None:  # pragma: no cover - runs in the child
    """In the forked child: the pipes' ends to 0, 1, 2; a new process group; the signals as
    ``Popen(restore_signals=True)`` leaves them; SIGKILL when the tap dies; exec. A
    failure goes to the parent as ``errno:where`` on the report pipe, then ``_exit``."""
    where = "setup"
    try:
        stdin, stdout, stderr = ends
        # an end already on 0, 1 or 2 moves out of the way first (as subprocess does)
        if stdout == 0:
            stdout = os.dup(stdout)
        while stderr in (0, 1):
            stderr = os.dup(stderr)
        for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
            if fd == target:
                os.set_inheritable(fd, True)
            else:
                os.dup2(fd, target)
        os.closerange(3, report)
        os.closerange(report + 1, top)
        os.setpgid(0, 0)
        for signum in _RESTORED:
            _signal.signal(signum, _signal.SIG_DFL)
        for signum in FORWARDED:  # a Python handler here would run in the child: exec resets
            if callable(_signal.getsignal(signum)):  # it anyway, and keeps SIG_IGN as Popen does
                _signal.signal(signum, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0)
        where = "exec"
        saved = 0
        last = 0
        for path in paths:  # the first error that is not "not here" wins, as in Popen
            try:
                os.execv(path, args)
            except OSError as exc:
                last = exc.errno or 0
                if not saved and last not in (errno.ENOENT, errno.ENOTDIR):
                    saved = last
        code = saved or last
    except OSError as exc:
        code = exc.errno or 0
    except BaseException:
        code = 0
    try:
        os.write(report, f"{code}:{where}".encode("ascii"))
    finally:
        os._exit(255)
