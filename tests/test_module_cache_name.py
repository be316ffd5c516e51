"""The Go module cache is ``module_cache``; a workspace is only the programs' file directory.
The keyword that once called the module cache a workspace still works, with a
DeprecationWarning."""

from __future__ import annotations

import warnings

import pytest

from gocode.codemode import CodeMode
from gocode.compile.modcache import ModuleCache
from gocode.toolbox import Toolbox
from tests.conftest import config_from, module_cache  # noqa: F401 (fixture)


def test_module_cache_is_taken_without_a_warning(module_cache):  # noqa: F811
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert CodeMode(config_from({}), module_cache=module_cache).module_cache is module_cache
        box = Toolbox(config_from({}), module_cache=module_cache, prewarm=False)
        assert box.code_mode.module_cache is module_cache


def test_the_old_keyword_still_works_and_warns(module_cache):  # noqa: F811
    with pytest.warns(DeprecationWarning, match=r"CodeMode\(workspace=\.\.\.\) is deprecated: pass module_cache"):
        cm = CodeMode(config_from({}), workspace=module_cache)
    assert cm.module_cache is module_cache
    with pytest.warns(DeprecationWarning, match=r"Toolbox\(workspace=\.\.\.\) is deprecated") as heard:
        box = Toolbox(config_from({}), workspace=module_cache, prewarm=False)
    assert box.code_mode.module_cache is module_cache
    assert [w.filename for w in heard] == [__file__]  # the warning points at the caller
    other = ModuleCache(module_cache.toolchain, module_cache.cache)
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="not both"):
        CodeMode(config_from({}), module_cache=module_cache, workspace=other)
