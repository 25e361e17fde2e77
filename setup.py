"""The one compiled part: the envelope scanner of the fast loader (C, no dependencies).

It is optional: where it cannot be built (no C compiler), the install goes on and the
loader uses its pure-Python path (``mcp_notebook.fast.native`` tells which is in use).
"""

from glob import glob

from setuptools import Extension, setup

setup(ext_modules=[Extension("mcp_notebook.fast._native", ["mcp_notebook/fast/csrc/module.c"],
                             depends=sorted(glob("mcp_notebook/fast/csrc/*.h")),
                             extra_compile_args=["-O3"], optional=True)])
