"""Whether ``gocode serve`` can ask a client to approve a program: it declared elicitation.

One test for both places that depend on it: whether a call gets an approver
(:func:`gocode.serve.elicitation.elicitation_approver`), and which tool list the client reads
(one that says a tool needing approval cannot run here, to a client that cannot be asked).
"""

from __future__ import annotations

from typing import Any


def can_be_asked(session: Any) -> bool:
    """Whether the client of ``session`` declared the ``elicitation`` capability (at its
    handshake, or with the request in the 2026-07-28 era)."""
    caps = getattr(session, "client_capabilities", None)
    return caps is not None and getattr(caps, "elicitation", None) is not None
