"""A module's underscore names are its own: no module of the package imports another's
(``from gocode.x import _name``) or reaches one through a module it imported
(``from gocode.x import y`` … ``y._name``). What several modules share is public."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_imports import ROOT, modules

pytestmark = pytest.mark.fast


def private_uses(root: Path) -> list[str]:
    known = modules(root)
    found = []
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases: dict[str, str] = {}  # a local name → the package module it is bound to
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target.split(".")[0] != "gocode":
                    continue
                for alias in node.names:
                    if f"{target}.{alias.name}" in known:
                        aliases[alias.asname or alias.name] = f"{target}.{alias.name}"
                    elif alias.name.startswith("_") and not alias.name.startswith("__") and target != module:
                        found.append(f"{path.relative_to(root)}:{node.lineno}: imports {target}.{alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "gocode" and alias.asname:
                        aliases[alias.asname] = alias.name
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and aliases[node.value.id] != module
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno}: uses {aliases[node.value.id]}.{node.attr}")
    return sorted(found)


def test_no_module_uses_another_modules_private_names():
    assert private_uses(ROOT) == []


def test_the_check_names_a_private_import_and_a_private_attribute(tmp_path):
    pkg = tmp_path / "gocode"
    (pkg / "schema").mkdir(parents=True)
    for d in (pkg, pkg / "schema"):
        (d / "__init__.py").write_text("")
    (pkg / "schema" / "doctext.py").write_text("def _doc():\n    pass\n\n\ndef doc():\n    _doc()\n")
    (pkg / "schema" / "builder.py").write_text(
        "from gocode.schema.doctext import _doc, doc\nfrom gocode.schema import doctext\n\n\ndoctext._doc()\n"
    )
    (pkg / "schema" / "names.py").write_text("from .doctext import (\n    doc,\n    _doc as d,\n)\n")
    (pkg / "schema" / "ir.py").write_text(
        "from __future__ import annotations\nfrom gocode.schema import doctext\n\ndoctext.doc()\n"
    )
    assert private_uses(tmp_path) == [
        "gocode/schema/builder.py:1: imports gocode.schema.doctext._doc",
        "gocode/schema/builder.py:5: uses gocode.schema.doctext._doc",
        "gocode/schema/names.py:1: imports gocode.schema.doctext._doc",
    ]
