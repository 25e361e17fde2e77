"""The failing member of a schema finding, marked in the inspector's JSON tree, in real
JupyterLab (light and dark).

On ``data/conversation-bad-arguments.jsonl`` (three ``tools/call`` requests whose arguments
break the tool's ``inputSchema``, ``data/README.md``): a click on frame 8 in the table shows
its tree opened to ``/params/arguments/a`` with that member marked and the finding as its
tooltip; a click on the finding of frame 10 in the violations list selects the frame and
marks ``/params/arguments`` (``b`` is missing) as the picked finding.

Screenshots go to ``tests/artifacts/static/``.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import REPO
from labhelpers import kernel_exec, set_theme, wait_kernel_output
from test_table_lab import table_in_lab

pytestmark = pytest.mark.browser

TRACE = REPO / "data" / "conversation-bad-arguments.jsonl"


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_schema_finding_member_marked_in_the_tree(lab_page, lab_server, artifacts, theme):
    page = lab_page  # the module's Lab page and kernel; the explorer is this test's own
    shots = artifacts / "static"
    shots.mkdir(parents=True, exist_ok=True)
    slug = theme.split()[-1].lower()
    shutil.copyfile(TRACE, lab_server["root"] / TRACE.name)
    page.set_viewport_size({"width": 1400, "height": 1500})
    table_in_lab(page, [
        # the sample's findings are the schema validation of object arguments, which
        # t.violations computes when asked (conversation.PARTIAL): the documented switch
        # brings them into t.violations, and so into the explorer
        "from mcp_notebook import conversation\n"
        "for code in conversation.PARTIAL:\n    conversation.DEEP.pop(code, None)",
        f"import mcp_notebook as mn\nt = mn.load({TRACE.name!r})\nex = mn.explore(t)\nex"])
    set_theme(page, theme)  # waits for the theme's stylesheet to be applied
    ins = page.locator(".mn-explorer .mn-inspector")
    # the explorer's first rows can take long under a loaded CI box (three browser workers
    # beside the kernels): wait for the row itself before the click's own 30 s
    row = ins.locator(".mnf-tr[data-seq='8']")
    row.wait_for(state="visible", timeout=90_000)
    row.click()
    mark = ins.locator('.mn-detail .mnw-tree [data-pointer="/params/arguments/a"]')
    mark.wait_for(state="visible", timeout=20_000)
    assert "tool-arguments-schema" in mark.get_attribute("title")
    assert "is not of type" in mark.get_attribute("title")
    assert "mnw-mark-picked" not in mark.get_attribute("class")
    assert "a" in mark.inner_text() and "two" in mark.inner_text()
    # the mark has the theme's warning colour as its outline, and it differs from the row's
    colours = mark.evaluate("""e => { const s = getComputedStyle(e), r = getComputedStyle(
        document.body).getPropertyValue('--jp-warn-color1').trim();
        return [s.outlineStyle, s.outlineColor, s.backgroundColor, r]; }""")
    assert colours[0] == "solid" and colours[3], (theme, colours)
    assert colours[2] not in ("rgba(0, 0, 0, 0)", "transparent"), (theme, colours)
    mark.hover()
    page.wait_for_timeout(300)
    ins.locator(".mn-detail").screenshot(path=str(shots / f"finding-mark-{slug}.png"))

    # a finding picked in the violations list: its frame is selected, its member marked most
    k = int(kernel_exec(page, "print(next(i for i, it in enumerate(ex.violations.items) "
                              "if it['seq'] == 10))"))
    page.locator(".mn-explorer .mn-lists .mnv-row").nth(k).click()
    assert wait_kernel_output(page, "print(ex.selected_seq)", "10") == "10"
    picked = ins.locator('.mn-detail .mnw-tree [data-pointer="/params/arguments"]')
    picked.wait_for(state="visible", timeout=20_000)
    assert "mnw-mark-picked" in picked.get_attribute("class")
    assert "required property" in picked.get_attribute("title")
    page.mouse.move(5, 5)
    ins.locator(".mn-detail").screenshot(path=str(shots / f"finding-picked-{slug}.png"))
    assert page.external_requests == []
