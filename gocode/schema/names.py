"""Go identifiers from untrusted names, and Go literals/comments from untrusted text.

Everything a server sends (tool names, property names, descriptions, enum values) passes
through here before it reaches Go source. Pure functions, no I/O.

Naming rules (documented for users in docs/go-mapping.md):

* words are split on anything that is not an ASCII letter or digit and on case changes
  (``getHTTPResponse`` → get, HTTP, Response); a non-ASCII letter or digit becomes its own
  word ``U<hex code point>`` so the name stays stable and ASCII;
* PascalCase capitalises each word, known initialisms stay upper case (``user_id`` → ``UserID``);
  lowerCamelCase lower-cases the first word whole (``URL_fetch`` → ``urlFetch``);
* a name that would start with a digit gets ``X``/``x`` in front (``3d_view`` → ``X3dView``);
  an empty name becomes ``X``;
* a function name that is a Go keyword, a predeclared identifier or a name the program
  itself uses gets ``Tool`` appended (``print`` → ``printTool``);
* a name already taken in its scope gets the next free suffix 2, 3, … in a stable order.
"""

from __future__ import annotations

import functools
import re
import unicodedata

# A Go identifier in ASCII, as generated names are: what source text is scanned for.
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

GO_KEYWORDS = frozenset(
    "break case chan const continue default defer else fallthrough for func go goto if import "
    "interface map package range return select struct switch type var".split()
)
GO_PREDECLARED = frozenset(
    "any bool byte comparable complex64 complex128 error float32 float64 int int8 int16 int32 int64 "
    "rune string uint uint8 uint16 uint32 uint64 uintptr true false iota nil append cap clear close "
    "complex copy delete imag len make max min new panic print println real recover".split()
)
INITIALISMS = frozenset(
    "ACL API ASCII CPU CSS CSV DB DNS EOF GUID HTML HTTP HTTPS ID IP JSON JWT MCP OS PDF QPS RAM RPC "
    "SDK SHA SLA SMTP SQL SSH SVG TCP TLS TTL UDP UI UID UUID URI URL UTF8 VM XML XSRF XSS YAML".split()
)


def words(name: str) -> list[str]:
    """Split a name into words on separators and case changes (see the module doc)."""
    return list(_words(name))


@functools.lru_cache(maxsize=1 << 16)  # a large tool set repeats the same names thousands of times
def _words(name: str) -> tuple[str, ...]:
    out: list[str] = []
    cur: list[str] = []  # the word so far: a list, as a string grown char by char is quadratic here

    def flush() -> None:
        if cur:
            out.append("".join(cur))
            cur.clear()

    name = unicodedata.normalize("NFKD", name)
    chars = [c for c in name if not unicodedata.combining(c)]
    for i, c in enumerate(chars):
        if c.isascii() and c.isalnum():
            if cur:
                prev = cur[-1]
                nxt = chars[i + 1] if i + 1 < len(chars) else ""
                # lower→Upper starts a word; in a run of capitals, the last one starts a word
                # when a lower-case letter follows (HTTPServer → HTTP Server).
                if ((prev.islower() or prev.isdigit()) and c.isupper()) or (
                    prev.isupper() and c.isupper() and nxt.isascii() and nxt.islower()
                ):
                    flush()
            cur.append(c)
        elif c.isalnum():
            flush()
            out.append(f"U{ord(c):x}")
        else:
            flush()
    flush()
    return tuple(out)


def _is_escape(word: str) -> bool:
    """``U<hex>``: a non-ASCII character spelled out by :func:`words`."""
    return word.startswith("U") and len(word) > 1 and all(ch in "0123456789abcdef" for ch in word[1:])


def _pascal_word(word: str) -> str:
    if word.upper() in INITIALISMS:
        return word.upper()
    if _is_escape(word):
        return word  # an escaped non-ASCII character keeps its spelling
    return word[0].upper() + word[1:].lower()


def pascal(name: str) -> str:
    """PascalCase Go identifier for ``name`` (exported)."""
    ws = words(name)
    ident = "".join(_pascal_word(w) for w in ws) or "X"
    return "X" + ident if ident[0].isdigit() else ident


def camel(name: str) -> str:
    """lowerCamelCase Go identifier for ``name`` (unexported); may still be a keyword."""
    ws = words(name)
    if not ws:
        return "x"
    first = ws[0] if _is_escape(ws[0]) else ws[0].lower()
    ident = first + "".join(_pascal_word(w) for w in ws[1:])
    return "x" + ident if ident[0].isdigit() else ident


def export(ident: str) -> str:
    """The exported spelling of a lowerCamel identifier (``getURL`` → ``GetURL``)."""
    return ident[0].upper() + ident[1:]


class Registry:
    """The names taken in one Go scope; hands out free names with a numeric suffix on a clash.

    Not thread-safe; one registry per generated package or struct.
    """

    def __init__(self, reserved: frozenset[str] | set[str] = frozenset()) -> None:
        self.reserved = frozenset(reserved)
        self._taken: set[str] = set(reserved)

    def taken(self, name: str) -> bool:
        """Whether ``name`` is taken (reserved or handed out)."""
        return name in self._taken

    def take(self, name: str) -> bool:
        """Take exactly ``name`` if it is free; whether it was."""
        if name in self._taken:
            return False
        self._taken.add(name)
        return True

    def claim(self, base: str, *, also: tuple[str, ...] = ()) -> str:
        """Take ``base`` (or ``base2``, ``base3``, …) together with the names in ``also``, which get the same
        suffix — e.g. a function's exported twin."""
        n = 1
        while True:
            suffix = "" if n == 1 else str(n)
            candidates = (base + suffix, *(a + suffix for a in also))
            if not any(c in self._taken for c in candidates):
                self._taken.update(candidates)
                return base + suffix
            n += 1


# --- literals and comments -------------------------------------------------------------------


def go_string(value: str) -> str:
    """A Go interpreted string literal for any Python string, ASCII-only.

    Control characters, quotes and backslashes are escaped; non-ASCII becomes ``\\u``/``\\U``;
    lone surrogates (possible in JSON) become U+FFFD, since Go rejects them in escapes.
    """
    out = ['"']
    for ch in value:
        cp = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif 0x20 <= cp < 0x7F:
            out.append(ch)
        elif 0xD800 <= cp <= 0xDFFF:
            out.append("\\ufffd")
        elif cp <= 0xFFFF:
            out.append(f"\\u{cp:04x}")
        else:
            out.append(f"\\U{cp:08x}")
    out.append('"')
    return "".join(out)


def comment_literal(value: str) -> str:
    """A Go string literal to quote inside a comment: ``''`` and ````` `` ````` are escaped
    (``\\x27``, ``\\x60``), because gofmt turns them into curly quotes in doc comments."""
    return go_string(value).replace("''", "'\\x27").replace("``", "`\\x60")


def _clean_char(ch: str) -> str:
    """One character of untrusted prose as it may appear in a comment ("" when dropped)."""
    if ch in "\n\r\v\f\x85\u2028\u2029":
        return "\n"
    if ch == "\t":
        return " "
    if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn"):
        return ""
    return ch


_ASCII_CLEAN = {i: _clean_char(chr(i)) for i in range(128)}


def clean_text(text: str, limit: int | None = None) -> list[str]:
    """Untrusted prose as lines that are safe inside ``//`` comments.

    Line breaks of every kind split lines; other control and format characters (NUL, BOM,
    bidi overrides, …) and lone surrogates are dropped; trailing blank lines go. ``limit``
    caps the total length, marking the cut with ``…``.
    """
    text = text.replace("\r\n", "\n")
    # Most text is ASCII: one table lookup per character in C, with the same result.
    text = text.translate(_ASCII_CLEAN) if text.isascii() else "".join(_clean_char(ch) for ch in text)
    if limit is not None and len(text) > limit:
        text = text[:limit].rstrip() + "…"
    # No leading indentation: gofmt turns indented doc-comment lines into code blocks and lists.
    # gofmt turns `` and '' in doc comments into curly quotes; plain double quotes keep the meaning.
    text = text.replace("``", '"').replace("''", '""')
    # One blank line at most between paragraphs (gofmt collapses runs of them).
    lines: list[str] = []
    for line in (raw.strip() for raw in text.split("\n")):
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return lines
