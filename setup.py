"""Two things pyproject.toml cannot say: the compiled scanner, and the bundled files.

The one compiled part is the envelope scanner of the fast loader (C, no dependencies). It
is optional: where it cannot be built (no C compiler), the install goes on and the loader
uses its pure-Python path (``mcp_notebook.engine.native`` tells which is in use).

The real traces (``data/``) and the tutorial (``notebooks/``) live at the top of the
repository, where ``make data``, ``make lab`` and the tests use them; a build copies them
into the package (``mcp_notebook/data``, ``mcp_notebook/notebooks``), where
``mcp_notebook.datasets`` finds them with ``importlib.resources``. Copied, not linked:
symlinks do not survive every sdist, wheel and file system, and two copies in git drift.
"""

import importlib.util
import os
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

#: package folder -> (folder in the repository, the files to bundle)
BUNDLED = {
    "data": ("data", ("*",)),  # every trace make_data writes, whatever its format
    "notebooks": ("notebooks", ("README.md", "*.ipynb")),  # answer keys: notebooks/instructor/
}


def write_vocab_header():
    """``csrc/vocab.h`` from ``protocol/vocab.py``: the C enums are the Python enums."""
    spec = importlib.util.spec_from_file_location("_vocab", "mcp_notebook/protocol/vocab.py")
    vocab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vocab)
    path = "mcp_notebook/engine/csrc/vocab.h"
    text = vocab.c_header()
    if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


write_vocab_header()


class build_py_bundled(build_py):
    """``build_py`` that also copies the bundled files into the package."""

    def _bundled(self, files):
        for target, (src, patterns) in BUNDLED.items():
            names = sorted({os.path.relpath(f, src) for p in patterns
                            for f in glob(os.path.join(src, p)) if os.path.isfile(f)})
            if not names:  # a wheel without its traces would fail only on the user's machine
                raise RuntimeError(f"nothing to bundle from {src}/ (patterns {patterns})")
            files.append(("mcp_notebook", src,
                          os.path.join(self.build_lib, "mcp_notebook", target), names))
        return files

    def _get_data_files(self):
        return self._bundled(super()._get_data_files())

    def get_data_files_without_manifest(self):
        return self._bundled(super().get_data_files_without_manifest())


setup(cmdclass={"build_py": build_py_bundled},
      ext_modules=[Extension("mcp_notebook.engine._native", ["mcp_notebook/engine/csrc/module.c"],
                             depends=sorted(glob("mcp_notebook/engine/csrc/*.h")),
                             extra_compile_args=["-O3"], optional=True)])
