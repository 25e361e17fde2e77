"""Fetch the JavaScript that renders saved widgets in exported HTML, for offline use.

``npm pack`` downloads two tarballs from the npm registry (no dependencies, no install
scripts) and their ``dist`` files are unpacked into a git-ignored cache folder:

- ``@jupyter-widgets/html-manager`` 1.0.x (``embed-amd.js`` and its fonts): the major
  version must match ipywidgets 8 (``ipywidgets._version.__html_manager_version__``);
- ``requirejs`` 2.3.8 (``require.js``), which ``embed-amd.js`` loads modules with;
- plus anywidget's own AMD module, copied from the installed Python package, so that
  anywidget views (the timeline, the frame table) render too.

Usage: ``python scripts/fetch_widget_js.py [DEST]`` (default ``.cache/widget-js``).
Prints DEST; does nothing when DEST is already complete.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / ".cache" / "widget-js"
HTML_MANAGER = "@jupyter-widgets/html-manager@1.0.15"
REQUIREJS = "requirejs@2.3.8"
NEEDED = ("embed-amd.js", "require.js", "anywidget.js")


def complete(dest: Path) -> bool:
    return all((dest / name).is_file() for name in NEEDED)


def _unpack(tgz: Path, prefix: str, dest: Path) -> None:
    with tarfile.open(tgz) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith(prefix):
                continue
            rel = member.name[len(prefix):]
            if not rel or rel.endswith(".map") or ".." in Path(rel).parts:
                continue
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(member)
            assert src is not None
            out.write_bytes(src.read())


def fetch(dest: Path = DEFAULT) -> Path:
    """Make sure ``dest`` holds embed-amd.js, require.js and anywidget.js; return it."""
    dest = Path(dest)
    if complete(dest):
        return dest
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to fetch the widget JavaScript (apt-get install npm)")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([npm, "pack", "--silent", HTML_MANAGER, REQUIREJS], cwd=tmp, check=True,
                       stdout=subprocess.DEVNULL, timeout=300)
        manager = next(Path(tmp).glob("jupyter-widgets-html-manager-*.tgz"))
        _unpack(manager, "package/dist/", dest)
        _unpack(next(Path(tmp).glob("requirejs-*.tgz")), "package/", dest / "requirejs")
        shutil.copyfile(dest / "requirejs" / "require.js", dest / "require.js")
        shutil.rmtree(dest / "requirejs")
    import anywidget

    amd = Path(anywidget.__file__).parent / "nbextension" / "index.js"
    shutil.copyfile(amd, dest / "anywidget.js")
    if not complete(dest):
        raise RuntimeError(f"fetching the widget JavaScript left {dest} incomplete")
    return dest


if __name__ == "__main__":
    print(fetch(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT))
