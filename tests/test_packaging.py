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
    ):
        assert needed in names
    assert "gocode/demo/server.py" in names
    # The Go packages' unit tests run from the checkout only.
    assert not [n for n in names if n.endswith("_test.go")]
