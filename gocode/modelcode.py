"""The model's Go code, split into what goes where in ``main.go``.

The model writes the body of ``Run(ctx context.Context) error``. It may also start with
``import`` lines and declare top-level ``func`` and ``type`` blocks; those are hoisted out of
``Run`` (a ``func`` declaration is never a valid statement, so hoisting one is always
right; a ``type`` is hoisted so that methods can be declared on it). Standard-library
packages the code uses without importing them are imported automatically, each with a
``var _ = pkg.X`` guard so a false positive (a local variable called ``json``) can never
cause an "imported and not used" error.

A small lexer (strings, raw strings, runes, comments) finds the boundaries; it does not
type-check. Line numbers are kept so compile errors point at the model's own lines.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gocode.errors import CodeError

# package name -> (import path, guard declaration). The guard uses the package so an
# import added on a false positive still compiles.
STDLIB: dict[str, tuple[str, str]] = {
    "fmt": ("fmt", "var _ = fmt.Sprint"),
    "strings": ("strings", "var _ = strings.Contains"),
    "strconv": ("strconv", "var _ = strconv.Itoa"),
    "errors": ("errors", "var _ = errors.New"),
    "sort": ("sort", "var _ = sort.Ints"),
    "slices": ("slices", "var _ = slices.Contains[[]int]"),
    "maps": ("maps", "var _ = maps.Clone[map[int]int]"),
    "cmp": ("cmp", "var _ = cmp.Compare[int]"),
    "iter": ("iter", "var _ iter.Seq[int]"),
    "time": ("time", "var _ = time.Now"),
    "json": ("encoding/json", "var _ = json.Marshal"),
    "base64": ("encoding/base64", "var _ = base64.NewEncoding"),
    "hex": ("encoding/hex", "var _ = hex.EncodeToString"),
    "csv": ("encoding/csv", "var _ = csv.NewReader"),
    "xml": ("encoding/xml", "var _ = xml.Marshal"),
    "math": ("math", "var _ = math.Abs"),
    "rand": ("math/rand", "var _ = rand.Intn"),
    "big": ("math/big", "var _ = big.NewInt"),
    "os": ("os", "var _ = os.Getenv"),
    "exec": ("os/exec", "var _ = exec.Command"),
    "slog": ("log/slog", "var _ = slog.Info"),
    "io": ("io", "var _ = io.ReadAll"),
    "bufio": ("bufio", "var _ = bufio.NewReader"),
    "bytes": ("bytes", "var _ = bytes.NewBuffer"),
    "regexp": ("regexp", "var _ = regexp.MustCompile"),
    "sync": ("sync", "var _ = sync.NewCond"),
    "atomic": ("sync/atomic", "var _ = atomic.AddInt64"),
    "log": ("log", "var _ = log.Println"),
    "unicode": ("unicode", "var _ = unicode.IsLetter"),
    "utf8": ("unicode/utf8", "var _ = utf8.RuneLen"),
    "sha256": ("crypto/sha256", "var _ = sha256.Sum256"),
    "sha1": ("crypto/sha1", "var _ = sha1.Sum"),
    "md5": ("crypto/md5", "var _ = md5.Sum"),
    "url": ("net/url", "var _ = url.Parse"),
    "http": ("net/http", "var _ = http.Get"),
    "filepath": ("path/filepath", "var _ = filepath.Join"),
    "path": ("path", "var _ = path.Join"),
    "tabwriter": ("text/tabwriter", "var _ = tabwriter.NewWriter"),
    "template": ("text/template", "var _ = template.New"),
    "html": ("html", "var _ = html.EscapeString"),
    "heap": ("container/heap", "var _ = heap.Init"),
    "list": ("container/list", "var _ = list.New"),
    "reflect": ("reflect", "var _ = reflect.TypeOf"),
    "runtime": ("runtime", "var _ = runtime.NumCPU"),
    "gzip": ("compress/gzip", "var _ = gzip.NewReader"),
    "errgroup": ("golang.org/x/sync/errgroup", "var _ = errgroup.WithContext"),
    "mcp": ("github.com/modelcontextprotocol/go-sdk/mcp", "var _ = mcp.NewClient"),
}

_IDENT = re.compile(r"[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_\u0080-\U0010ffff]*")


@dataclass(frozen=True)
class Import:
    name: str | None  # alias, "_" or "."; None for the default name
    path: str
    line: int


@dataclass(frozen=True)
class Chunk:
    line: int  # 1-based line of the model's code where text starts
    text: str


@dataclass(frozen=True)
class SplitCode:
    imports: tuple[Import, ...] = ()
    hoisted: tuple[Chunk, ...] = ()
    body: tuple[Chunk, ...] = ()
    auto_imports: tuple[str, ...] = ()
    guards: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())


@dataclass
class _Tok:
    kind: str  # ident, punct, string, number
    text: str
    line: int


@dataclass
class _Line:
    depth: int = 0  # bracket depth at the start of the line
    in_literal: bool = False  # the line starts inside a raw string or block comment
    toks: list[_Tok] = field(default_factory=list)
    end_depth: int = 0


def _lex(code: str) -> list[_Line]:
    lines = [_Line() for _ in code.split("\n")]
    i, n, line, depth = 0, len(code), 0, 0
    stack: list[tuple[str, int]] = []
    pairs = {")": "(", "]": "[", "}": "{"}
    lines[0].depth = 0
    while i < n:
        c = code[i]
        if c == "\n":
            lines[line].end_depth = depth
            line += 1
            lines[line].depth = depth
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if code.startswith("//", i):
            j = code.find("\n", i)
            i = n if j < 0 else j
            continue
        if code.startswith("/*", i):
            j = code.find("*/", i + 2)
            if j < 0:
                raise CodeError(f"line {line + 1}: this /* comment is never closed", line=line + 1)
            line = _cross_lines(lines, line, depth, code.count("\n", i, j))
            i = j + 2
            continue
        if c == "`":
            j = code.find("`", i + 1)
            if j < 0:
                raise CodeError(f"line {line + 1}: this raw string (`) is never closed", line=line + 1)
            lines[line].toks.append(_Tok("string", code[i : j + 1], line))
            line = _cross_lines(lines, line, depth, code.count("\n", i, j))
            i = j + 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and code[j] != c and code[j] != "\n":
                j += 2 if code[j] == "\\" else 1
            if j >= n or code[j] != c:
                what = "string" if c == '"' else "rune literal"
                raise CodeError(f"line {line + 1}: this {what} is not closed on its line", line=line + 1)
            lines[line].toks.append(_Tok("string", code[i : j + 1], line))
            i = j + 1
            continue
        m = _IDENT.match(code, i)
        if m:
            lines[line].toks.append(_Tok("ident", m.group(), line))
            i = m.end()
            continue
        if c.isdigit():
            j = i
            while j < n and (code[j].isalnum() or code[j] in "._"):
                j += 1
            lines[line].toks.append(_Tok("number", code[i:j], line))
            i = j
            continue
        if c in "([{":
            stack.append((c, line + 1))
            depth += 1
        elif c in ")]}":
            if not stack or stack[-1][0] != pairs[c]:
                raise CodeError(f"line {line + 1}: unexpected {c!r} (nothing open to close)", line=line + 1)
            stack.pop()
            depth -= 1
        lines[line].toks.append(_Tok("punct", c, line))
        i += 1
    lines[line].end_depth = depth
    if stack:
        opener, at = stack[-1]
        raise CodeError(f"line {at}: this {opener!r} is never closed", line=at)
    return lines


def _cross_lines(lines: list[_Line], line: int, depth: int, count: int) -> int:
    """Move past ``count`` newlines inside a raw string or block comment; returns the new line index."""
    for _ in range(count):
        lines[line].end_depth = depth
        line += 1
        lines[line].depth, lines[line].in_literal = depth, True
    return line


def _is_func_decl(toks: list[_Tok]) -> bool:
    """``func Name(``, ``func Name[`` or ``func (r T) Name(`` — not a ``func(`` literal."""
    if len(toks) < 2 or toks[0].text != "func":
        return False
    if toks[1].kind == "ident":
        return True
    if toks[1].text == "(":
        # a method: after the receiver's closing paren comes the method name
        depth = 0
        for k, t in enumerate(toks[1:], start=1):
            if t.text == "(":
                depth += 1
            elif t.text == ")":
                depth -= 1
                if depth == 0:
                    return k + 1 < len(toks) and toks[k + 1].kind == "ident"
    return False


def split_code(code: str) -> SplitCode:
    """Split the model's code; raises :class:`CodeError` for code that cannot be placed in ``Run``."""
    code = code.replace("\r\n", "\n")
    if "\x00" in code:
        raise CodeError("the code contains a NUL byte")
    src_lines = code.split("\n")
    lexed = _lex(code)

    imports: list[Import] = []
    hoisted: list[Chunk] = []
    body: list[Chunk] = []
    declared: set[str] = set()
    func_main: int | None = None
    func_run: int | None = None
    body_lines: list[tuple[int, str]] = []
    notes: list[str] = []

    i = 0
    while i < len(src_lines):
        info = lexed[i]
        toks = info.toks
        top = info.depth == 0 and not info.in_literal and toks
        first = toks[0].text if top else ""
        if top and first in ("import", "package", "func", "type") and (first != "func" or _is_func_decl(toks)):
            j = i
            if first == "func":
                # runs until the line where the body's braces close again
                opened = any(t.text == "{" for t in toks)
                while not (opened and lexed[j].end_depth == 0):
                    j += 1
                    if j >= len(src_lines):
                        raise CodeError(f"line {i + 1}: this func declaration has no body", line=i + 1)
                    opened = opened or any(t.text == "{" for t in lexed[j].toks)
            else:
                while lexed[j].end_depth != 0:
                    j += 1
            text = "\n".join(src_lines[i : j + 1])
            if first == "package":
                notes.append(f"line {i + 1}: the package clause is not needed and was dropped")
            elif first == "import":
                imports.extend(_parse_imports([t for k in range(i, j + 1) for t in lexed[k].toks], i + 1))
            else:
                name_tok = _decl_name(toks)
                if first == "func" and name_tok == "main" and toks[1].text == "main":
                    func_main = i + 1
                    text = text.replace("func main", "func gocodeModelMain", 1)
                elif first == "func" and name_tok == "Run" and toks[1].text == "Run":
                    func_run = i + 1
                    text = text.replace("func Run", "func gocodeModelRun", 1)
                if name_tok:
                    declared.add(name_tok)
                hoisted.append(Chunk(i + 1, text))
            i = j + 1
            continue
        body_lines.append((i + 1, src_lines[i]))
        i += 1

    # Contiguous body lines form one chunk, each with its own //line directive.
    for lineno, text in body_lines:
        if not text.strip():
            continue  # blank lines need no //line directive; the next chunk carries its own
        if body and body[-1].line + body[-1].text.count("\n") + 1 == lineno:
            last = body.pop()
            body.append(Chunk(last.line, last.text + "\n" + text))
        else:
            body.append(Chunk(lineno, text))
    has_statements = any(t.strip() and not t.strip().startswith("//") for _, t in body_lines)
    for lineno, name, call in (
        (func_main, "main", "gocodeModelMain()"),
        (func_run, "Run", "return gocodeModelRun(ctx)"),
    ):
        if lineno is None:
            continue
        if has_statements or (func_main and func_run):
            raise CodeError(
                f"line {lineno}: do not declare func {name}: your code is the body of "
                "Run(ctx context.Context) error — write the statements at the top level, "
                "and give helper functions other names",
                line=lineno,
            )
        body = [Chunk(lineno, call)]

    auto, guards = _auto_imports(lexed, imports, declared)
    return SplitCode(tuple(imports), tuple(hoisted), tuple(body), auto, guards, tuple(notes))


def _decl_name(toks: list[_Tok]) -> str | None:
    if toks[0].text == "type":
        return toks[1].text if len(toks) > 1 and toks[1].kind == "ident" else None
    if toks[1].kind == "ident":
        return toks[1].text
    return None  # a method: its name does not enter the package scope


def _parse_imports(toks: list[_Tok], first_line: int) -> list[Import]:
    out: list[Import] = []
    k = 1  # skip "import"
    pending: str | None = None
    while k < len(toks):
        t = toks[k]
        if t.kind == "string":
            path = t.text[1:-1]
            if t.text.startswith('"'):
                path = bytes(path, "utf-8").decode("unicode_escape") if "\\" in path else path
            out.append(Import(pending, path, t.line + 1))
            pending = None
        elif t.kind == "ident" or t.text == ".":
            pending = t.text
        elif t.text in "();":
            pass
        else:
            raise CodeError(f"line {t.line + 1}: cannot read this import line", line=t.line + 1)
        k += 1
    if not out:
        raise CodeError(f"line {first_line}: import without a path", line=first_line)
    return out


def _auto_imports(
    lexed: list[_Line], imports: list[Import], declared: set[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    have = {imp.name or _default_name(imp.path) for imp in imports}
    used: list[str] = []
    for info in lexed:
        toks = info.toks
        for k, t in enumerate(toks):
            if (
                t.kind == "ident"
                and t.text in STDLIB
                and k + 1 < len(toks)
                and toks[k + 1].text == "."
                and not (k > 0 and toks[k - 1].text == ".")
                and t.text not in have
                and t.text not in declared
                and t.text not in used
            ):
                used.append(t.text)
    used.sort(key=lambda u: STDLIB[u][0])
    return tuple(STDLIB[u][0] for u in used), tuple(STDLIB[u][1] for u in used)


def _default_name(path: str) -> str:
    parts = path.split("/")
    if len(parts) > 1 and re.fullmatch(r"v[0-9]+", parts[-1]):
        return parts[-2]
    return parts[-1]
