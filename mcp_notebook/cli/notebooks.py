"""``mcp-notebook notebooks`` (copy the tutorials) and ``mcp-notebook open`` (write an
analysis notebook for a capture, start JupyterLab on it)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time: it slows the tap's start
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any


def add_notebooks(sub: Any) -> None:
    p = sub.add_parser("notebooks", help="copy the tutorial notebooks into a folder",
                       description="Copy the tutorial notebooks and their solutions into "
                                   "DEST, ready for `jupyter lab DEST`; they read the "
                                   "bundled traces wherever they are.")
    p.add_argument("dest", metavar="DEST", help="the folder (made if missing)")
    p.add_argument("--no-solutions", action="store_true", help="leave out solutions/")
    p.add_argument("--force", action="store_true", help="replace files already in DEST")


def cmd_notebooks(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..bundled import copy_notebooks

    dest = Path(args.dest)
    written = copy_notebooks(dest, solutions=not args.no_solutions, overwrite=args.force)
    kept = "" if args.force else " (files already there are kept; --force replaces them)"
    print(f"wrote {len(written)} file(s) to {dest}{kept}")
    print(f"next: jupyter lab {dest}")
    return 0


def add_open(sub: Any) -> None:
    p = sub.add_parser("open", help="write an analysis notebook for a capture, open JupyterLab",
                       description="Write a notebook that loads CAPTURE and walks a "
                                   "debugging checklist (JSON-RPC 2.0, ids, errors and "
                                   "isError, methods and capabilities, findings with their "
                                   "spec sentences, latency, redaction), then start "
                                   "JupyterLab on it.")
    p.add_argument("capture", metavar="CAPTURE",
                   help="a capture file or folder, or a bundled trace name (e.g. demo-stdio)")
    p.add_argument("--out", "-o", metavar="FILE.ipynb",
                   help="the notebook to write (default: CAPTURE's name .ipynb, here)")
    p.add_argument("--no-lab", action="store_true", help="write the notebook only")
    p.add_argument("--force", action="store_true", help="overwrite an existing notebook")
    p.add_argument("--lab-args", default="", metavar="'OPTIONS'",
                   help="options for JupyterLab, e.g. --lab-args='--port 8890 --no-browser'")


def cmd_open(args: argparse.Namespace) -> int:
    import subprocess
    from importlib.util import find_spec
    from pathlib import Path

    from ..notebook import analysis, resolve_capture, write

    try:
        path, _ = resolve_capture(args.capture)
    except FileNotFoundError as exc:
        print(f"mcp-notebook: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(path.stem + ".ipynb")
    if out.exists() and not args.force:
        print(f"{out} exists: kept as it is (--force writes it anew)")
    else:
        write(analysis(args.capture, notebook=out), out)
        print(f"wrote {out}")
    if args.no_lab:
        return 0
    if find_spec("jupyterlab") is None:
        print("mcp-notebook: JupyterLab is not installed: pip install jupyterlab "
              f"(or open {out} in any Jupyter front end)", file=sys.stderr)
        return 2
    try:
        return subprocess.call(_lab_command(out, args.lab_args))
    except KeyboardInterrupt:
        return 0


def _lab_command(path: Path, extra: str = "") -> list[str]:
    import shlex

    root = hasattr(os, "geteuid") and os.geteuid() == 0  # Jupyter refuses root without it
    return [sys.executable, "-m", "jupyterlab", *(["--allow-root"] if root else []),
            *shlex.split(extra), str(path)]
