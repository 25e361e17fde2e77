"""The public names stay what they are, whatever the user imported first."""

import subprocess
import sys

import pytest

ORDERS = {
    "the submodule first": "import mcp_notebook.load\nimport mcp_notebook as mn",
    "the package first": "import mcp_notebook as mn\nimport mcp_notebook.load",
    "the cli first": "import mcp_notebook.cli\nimport mcp_notebook.load\nimport mcp_notebook as mn",
    "the function used, then the submodule": (
        "import mcp_notebook as mn\nf = mn.load\nimport mcp_notebook.load\nassert mn.load is f"),
}


@pytest.mark.parametrize("imports", ORDERS.values(), ids=ORDERS.keys())
def test_mn_load_is_the_function_in_any_import_order(imports):
    code = imports + ("\nimport sys, types\nm = sys.modules[\"mcp_notebook.load\"]\n"
                      "assert not isinstance(mn.load, types.ModuleType), mn.load\n"
                      "assert mn.load is m.load\n"
                      "print(mn.load(mn.sample_path()).summary()['pairs'] > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
