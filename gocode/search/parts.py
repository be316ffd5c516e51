"""A request that names several actions, split into its parts ("git log of the latest commit;
write a text file" → two), so each part is searched on its own (pure).

A request is cut at hard punctuation (``;``, a sentence's end, a new line) and, where the words
after it start with an action, at a comma or a conjunction (and, then, also, plus). An action
is a word a tool of the set starts its name with (the verb its name says, server words aside:
``write`` for ``write_file``, ``log`` for ``git_log``) or a word the analyser takes as one of
theirs (:func:`gocode.search.analysis.related`: ``save`` for ``write``), as written: "changed
files" is not "change"; it may follow a server's name ("git log") and words such as "then" or
"please", but not an article ("the diff between HEAD and a branch" is one part). A request is in
parts only when each part, the first included, starts with an action and says more than it
("why did the build fail? show the logs" is one request; so is "find and replace X"). Values a
request quotes or names (``'a; b'``, ``src/a.py``) are never cut.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection

from gocode.search.analysis import VALUE, WORD, analyzer, prepare, related

# More parts than this are searched as the last one (the answer stays bounded).
MAX_PARTS = 4
# Where a request always divides, and where it divides before an action.
_HARD = re.compile(r"[;\n]|[.!?](?=\s)")
# Each starts at a comma or a space and reads on a bounded way: linear in the request.
_SOFT = re.compile(r",(?:\s*(?:and|then|also|plus)\b)*|\s(?:and|then|also|plus)\b(?:\s+(?:then|also)\b)*", re.I)
# How far past a cut its action is looked for: a few words of lead-in at most.
_LOOK_WORDS = 8
_LOOK_CHARS = 200
# Words that may come before the action of a part ("and then please also create …", "and I
# want you to create …"); not articles: "the diff between HEAD and a branch" is one part.
_LEAD = frozenset(
    "then also plus finally next afterwards lastly please and so i we you can could would will want need "
    "to let lets us me".split()
)


def action_words(verbs: Collection[str]) -> frozenset[str]:
    """The words that start a part: ``verbs`` (the words tools start their names with, as
    written) and the words the analyser relates to them."""
    out = {v.lower() for v in verbs}
    for v in list(out):
        out.update(related(v))
    return frozenset(out)


def _masked(query: str) -> str:
    """The query with its values blanked out (same length), so no cut falls inside one."""
    return VALUE.sub(lambda m: "x" * len(m.group(0)), query)


def _content(text: str) -> bool:
    return bool(analyzer().analyze(prepare(text)))


def _starts_with_action(text: str, actions: frozenset[str], leads: frozenset[str], at: int = 0) -> bool:
    """Whether ``text`` from ``at`` starts with an action (after words that may lead one: "then",
    "please", a server's name as in "git log") and says something after it ("find and replace X"
    is one action, "rename it" another). Reads a bounded stretch: linear in a whole request."""
    said = WORD.finditer(text, at, at + _LOOK_CHARS)
    for m in itertools.islice(said, _LOOK_WORDS):
        low = m.group(0).lower()
        if low in actions:
            return next(said, None) is not None
        if low not in _LEAD and low not in leads:
            return False
    return False


def split(query: str, actions: frozenset[str], leads: frozenset[str] = frozenset()) -> list[str]:
    """The parts of a request, in order (one part: the request as it is, stripped): ``actions``
    start a part, ``leads`` (the words that name servers) may come before one."""
    masked = _masked(query)
    cuts: list[tuple[int, int]] = [(m.start(), m.end()) for m in _HARD.finditer(masked)]
    for m in _SOFT.finditer(masked):
        if _starts_with_action(masked, actions, leads, m.end()):
            cuts.append((m.start(), m.end()))
    pieces: list[str] = []
    at = 0
    for start, end in sorted(cuts):
        if start < at:
            continue
        pieces.append(query[at:start])
        at = end
    pieces.append(query[at:])
    parts: list[str] = []
    for piece in (p.strip(" \t,;") for p in pieces):
        if not piece:
            continue
        if parts and not _content(piece):
            parts[-1] = f"{parts[-1]} {piece}"
        elif not parts or _content(parts[-1]):
            parts.append(piece)
        else:
            parts[-1] = f"{parts[-1]} {piece}"
    # Parts are actions asked for one after another: a request that does not start with one
    # ("why did the build fail? show the logs") is one request with its context.
    if not _starts_with_action(_masked(parts[0]) if parts else "", actions, leads):
        return [query.strip()]
    merged: list[str] = []
    for part in parts:
        if merged and not _starts_with_action(_masked(part), actions, leads):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    parts = merged
    if len(parts) < 2:
        return [query.strip()]  # one request, as it was written
    if len(parts) > MAX_PARTS:
        parts[MAX_PARTS - 1 :] = [" ".join(parts[MAX_PARTS - 1 :])]
    return parts
