"""The wheel carries the Go side, so an installed gocode works outside the repository."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from tests.conftest import ROOT


def test_wheel_ships_templates_and_go_mod(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(ROOT), "-w", str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("gocode-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "gocode/go.mod.tmpl",
        "gocode/go.sum.tmpl",
        "gocode/go_templates/rt/rt.go",
        "gocode/go_templates/rt/json.go",
        "gocode/go_templates/main.go.j2",
        "gocode/go_templates/gofix/main.go",  # Go's parser and type checker, built on first use
        "gocode/program/typecheck.py",  # runs that helper
        "gocode/search/rank_model.json",  # the learned ranking's trees, read beside the module
        "gocode/search/background.npz",  # what search measures a tool's similarity against
    ):
        assert needed in names
    assert "gocode/demo/server.py" in names
    # The Go packages' unit tests run from the checkout only.
    assert not [n for n in names if n.endswith("_test.go")]
    # Everything the package holds in the checkout, and nothing else: no tests, benches or their data.
    tracked = subprocess.run(
        ["git", "ls-files", "gocode", "go_templates"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    shipped = {"gocode/" + n if n.startswith("go_templates/") else n for n in tracked if not n.endswith("_test.go")}
    shipped |= {"gocode/go.mod.tmpl", "gocode/go.sum.tmpl"}
    ours = {n for n in names if ".dist-info/" not in n}
    assert ours == shipped, (sorted(ours - shipped), sorted(shipped - ours))
