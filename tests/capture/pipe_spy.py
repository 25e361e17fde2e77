"""An independent witness for the tap tests: relay stdio to a command and log the bytes.

``python pipe_spy.py LOG -- CMD ARGS...`` runs CMD, copies its stdin and stdout through
unchanged and appends every byte that passed to ``LOG.c2s`` and ``LOG.s2c``. It shares no
code with the tap, so the tests can compare what each side really sent and received.
"""

import os
import subprocess
import sys
import threading


def write_all(dst: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(dst, view):]


def pump(src: int, dst: int, log_path: str, close_dst) -> None:
    with open(log_path, "ab", buffering=0) as log:
        while True:
            try:
                data = os.read(src, 65536)
            except OSError:
                data = b""
            if not data:
                break
            log.write(data)
            try:
                write_all(dst, data)
            except OSError:
                break
    close_dst()


def main() -> int:
    log = sys.argv[1]
    cmd = sys.argv[3:] if sys.argv[2] == "--" else sys.argv[2:]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    t_in = threading.Thread(target=pump, args=(0, proc.stdin.fileno(), log + ".c2s",
                                               proc.stdin.close), daemon=True)
    t_out = threading.Thread(target=pump, args=(proc.stdout.fileno(), 1, log + ".s2c",
                                                lambda: None), daemon=True)
    t_in.start()
    t_out.start()
    code = proc.wait()
    t_out.join(10)
    return code


if __name__ == "__main__":
    status = main()
    os._exit(status)
