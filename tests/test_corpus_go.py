"""The whole schema corpus as one Go package: it compiles, vets and is gofmt-clean (needs Go)."""

from __future__ import annotations

import pytest

from tests.conftest import assert_go_package_clean
from tests.corpus_data import all_package

pytestmark = pytest.mark.go


def test_corpus_compiles_vets_and_is_gofmt_clean(module_cache, tmp_path):
    pkg = all_package()
    assert len(pkg.funcs) >= 150  # the real servers alone list that many tools
    assert_go_package_clean(module_cache, pkg, tmp_path)
