"""Who the HTTP transport lets in, and what counts as this machine: pure checks, no sockets."""

from __future__ import annotations

import pytest

from gocode.serve.guard import is_loopback
from gocode.serve.server import bind_address

pytestmark = pytest.mark.fast


def test_loopback_is_judged_by_address_never_by_a_name_prefix():
    for address in ("127.0.0.1", "127.3.2.1", "::1", "[::1]", "::ffff:127.0.0.1"):
        assert is_loopback(address), address
    # A name is never taken at its word: 127.evil.example may resolve anywhere.
    for host in ("127.evil.example", "127.0.0.1.evil.example", "localhost", "0.0.0.0", "::", "10.0.0.1", ""):
        assert not is_loopback(host), host


def test_the_bound_address_is_the_judged_one():
    assert bind_address("localhost") == "127.0.0.1"  # explicitly, whatever the resolver says
    assert bind_address("[::1]") == "::1"
    assert bind_address("0.0.0.0") == "0.0.0.0"
