"""The Go sources' own unit tests (``go_templates/<package>/*_test.go``), run by ``go test``.

The packages are copied into a module made from the templates every gocode build uses
(``go.mod.tmpl``, ``go.sum.tmpl``), so the tests compile against the pinned SDK, offline, from
the warmed module cache (``GOFLAGS=-mod=mod`` as in the module cache; ``GOPROXY`` is off unless
the environment sets it), and checked with gofmt and go vet. ``make test-go`` runs only this file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gocode.compile.modcache import ModuleCache
from gocode.files import write_file
from gocode.program import typecheck
from gocode.resources import go_mod_template, go_sum_template, package_sources, rt_sources, templates_dir

PACKAGES = ("rt", "gofix", "launcher")
# The runtime's second transport (gocode.compile.runners): its files and tests build with this tag.
LOOPBACK_TAGS = "-tags=gocode_loopback"
RUNS = (("rt", ""), ("rt", LOOPBACK_TAGS), ("gofix", ""), ("launcher", ""))
GO_TEST_TIMEOUT = 240  # seconds: the launcher's and the runtime's tests start processes


def _module(root: Path) -> Path:
    write_file(root / "go.mod", go_mod_template())
    write_file(root / "go.sum", go_sum_template())
    for package in PACKAGES:
        shutil.copytree(templates_dir() / package, root / package)
    return root


@pytest.fixture(scope="module")
def module(module_cache: ModuleCache, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    env = module_cache.go_env(offline="GOPROXY" not in os.environ)
    env["GOFLAGS"] = "-mod=mod -modcacherw"
    # The helper's tests list the standard library's export data with this same go command.
    env["PATH"] = os.pathsep.join([str(Path(module_cache.toolchain.go).parent), env.get("PATH", "")])
    return _module(tmp_path_factory.mktemp("gotest")), env


@pytest.mark.go
@pytest.mark.parametrize(("package", "tags"), RUNS, ids=[f"{p}{t and '-loopback'}" for p, t in RUNS])
def test_go_package(module: tuple[Path, dict[str, str]], module_cache: ModuleCache, package: str, tags: str) -> None:
    root, env = module
    assert list((root / package).glob("*_test.go")), f"go_templates/{package} has no Go tests"
    flags = [tags] if tags else []
    proc = subprocess.run(
        [module_cache.toolchain.go, "test", "-count=1", *flags, f"-timeout={GO_TEST_TIMEOUT}s", f"./{package}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=GO_TEST_TIMEOUT + 120,
    )
    assert proc.returncode == 0, f"go test ./{package} failed:\n{proc.stdout}\n{proc.stderr}"
    assert proc.stdout.startswith("ok "), proc.stdout


@pytest.mark.go
def test_go_sources_are_formatted_and_vetted(module: tuple[Path, dict[str, str]], module_cache: ModuleCache) -> None:
    root, env = module
    gofmt = Path(module_cache.toolchain.go).with_name("gofmt")
    listed = subprocess.run([str(gofmt), "-l", *PACKAGES], cwd=root, capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and listed.stdout == "", f"not gofmt-clean:\n{listed.stdout}{listed.stderr}"
    vet = subprocess.run(
        [module_cache.toolchain.go, "vet", *(f"./{p}" for p in PACKAGES)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=GO_TEST_TIMEOUT,
    )
    assert vet.returncode == 0, f"go vet:\n{vet.stdout}{vet.stderr}"
    vet = subprocess.run(
        [module_cache.toolchain.go, "vet", LOOPBACK_TAGS, "./rt"], cwd=root, env=env, capture_output=True, text=True,
        timeout=GO_TEST_TIMEOUT,
    )  # fmt: skip
    assert vet.returncode == 0, f"go vet {LOOPBACK_TAGS}:\n{vet.stdout}{vet.stderr}"


@pytest.mark.fast
def test_built_sources_leave_the_tests_out() -> None:
    """What gocode writes into its module cache to build (the runtime, the helper, the launcher)
    never carries a package's _test.go files: they import testing and httptest, and an edit to
    a test must not change the module cache's key or the helper's and launcher's digests."""
    for package in PACKAGES:
        assert list((templates_dir() / package).glob("*_test.go")), package
        files = package_sources(package)
        assert files and not [name for name in files if name.endswith("_test.go")], package
    assert rt_sources() == package_sources("rt")
    assert typecheck.sources() == package_sources("gofix")
