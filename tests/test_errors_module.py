"""Every exception the package defines is in gocode/errors.py, drawn in its tree; the names the
public API once exported and nothing raises stay importable, with a DeprecationWarning."""

from __future__ import annotations

import ast
import builtins
import re

import pytest

from tests.test_imports import ROOT, modules

pytestmark = pytest.mark.fast

BUILTIN_EXCEPTIONS = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}


def errors_classes() -> dict[str, ast.ClassDef]:
    tree = ast.parse((ROOT / "gocode" / "errors.py").read_text(encoding="utf-8"))
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def base_names(node: ast.ClassDef) -> set[str]:
    out = set()
    for b in node.bases:
        if isinstance(b, ast.Name):
            out.add(b.id)
        elif isinstance(b, ast.Attribute):
            out.add(b.attr)
    return out


def exceptions_elsewhere(root) -> list[str]:
    """Classes outside errors.py that derive from a built-in exception or one of errors.py's."""
    known = BUILTIN_EXCEPTIONS | set(errors_classes())
    found = []
    for module, path in modules(root).items():
        if module == "gocode.errors":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ClassDef) and base_names(node) & known:
                found.append(f"{path.relative_to(root)}:{node.lineno}: {node.name}")
    return found


def test_every_exception_is_defined_in_errors_py():
    assert exceptions_elsewhere(ROOT) == []


def test_the_check_names_an_exception_defined_elsewhere(tmp_path):
    pkg = tmp_path / "gocode"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("class GocodeError(Exception):\n    pass\n")
    (pkg / "a.py").write_text(
        "from gocode.errors import GocodeError\n\n\nclass Stray(GocodeError):\n    pass\n\n\n"
        "def f():\n    class Local(ValueError):\n        pass\n\n\nclass Plain:\n    pass\n"
    )
    assert exceptions_elsewhere(tmp_path) == ["gocode/a.py:4: Stray", "gocode/a.py:9: Local"]


def test_the_tree_in_the_docstring_names_every_class():
    doc = ast.get_docstring(ast.parse((ROOT / "gocode" / "errors.py").read_text(encoding="utf-8"))) or ""
    drawn = {line.split("── ")[1].split()[0] for line in doc.splitlines() if "── " in line}
    drawn |= {line.split()[0] for line in doc.splitlines() if line.startswith("    GocodeError")}
    assert set(errors_classes()) == drawn


@pytest.mark.parametrize("name", ["SchemaError", "CodeError"])
def test_names_nothing_raises_are_deprecated_aliases(name):
    import gocode
    import gocode.errors

    with pytest.warns(DeprecationWarning, match=f"{name} is deprecated"):
        cls = getattr(gocode.errors, name)
    assert issubclass(cls, gocode.errors.GocodeError) and cls.__name__ == name
    assert name not in gocode.__all__
    # Nothing in the package raises or catches them (jsonschema.SchemaError is another class).
    used = re.compile(rf"(?<![.\w\"]){name}\b")
    for module, path in modules(ROOT).items():
        if module != "gocode.errors":
            assert not used.search(path.read_text(encoding="utf-8")), module
