"""The usage rules every description starts with.

Paid on every turn, so short: the Go version and what is importable, how to call a tool, the
limits in force, ``result(v)`` for a structured answer, and one example using ``must``. Every
statement about the helpers is true of what main.go declares: tests/test_rules_go.py compiles
the examples and the signatures the text gives.
"""

from __future__ import annotations

from gocode.config import CodeModeConfig
from gocode.view.selection import ToolView

SEARCH_TOOL_NAME = "search_go_tools"  # gocode.search.answer offers it

_FULL = "files only in its working directory, no network but the tools, no other programs"
# What each sandbox tier confines (see docs/sandbox.md); the weaker ones say less.
_TIERS = {
    "netns": _FULL,
    "landlock": _FULL,
    "landlock-fs": "files only in its working directory, no other programs",
    "seccomp-only": "no other programs",
}
# Before the tier is known (the host is probed after the warm-up): what the setting promises.
_SETTINGS = {
    "on": _FULL,
    "strict": _FULL,
    "best-effort": "as far as the host allows",
}


def rules(
    settings: CodeModeConfig,
    go_version: str,
    tier: str | None = None,
    process_limit: str = "cgroup",
    offers: bool = True,
) -> str:
    """The rules for one model's settings (``go_version`` like ``1.26``; ``tier``: the sandbox
    tier in force, None when unconfined or not known yet; ``process_limit``: how a run's threads
    are capped, as :func:`gocode.run.sandbox.process_limit` says; ``offers``: whether a server
    offers resources or prompts, which the rules then say how to reach)."""
    limits = f"stopped after {settings.clamp_timeout(None):g} s, output capped at {settings.max_output_bytes} bytes"
    if tier is not None:
        limits += f"; sandboxed ({tier} tier): {_TIERS.get(tier, 'confined')}, {settings.limits.memory_mb} MB memory"
        if process_limit in ("cgroup", "users"):  # a cgroup or a user per run (docs/sandbox.md)
            limits += f", {settings.limits.threads} threads of its own"
        elif process_limit == "shared":  # one user every run shares
            limits += f", {settings.limits.threads} threads shared with other programs"
    elif settings.sandbox in _SETTINGS:
        limits += f"; sandboxed: {_SETTINGS[settings.sandbox]}, {settings.limits.memory_mb} MB memory"
    kept = ""
    if settings.workdir.enabled:
        # The workspace (gocode.run.workdir): state between calls, and output too long to return.
        kept = (
            f"The working directory persists between calls ({settings.workdir.max_mb} MB); "
            "longer output is saved there.\n"
        )
    # What a program reaches besides the tools' functions (go_templates/rt/resources.go).
    more = _RESOURCES if offers else ""
    more += _WHOLE_RESULTS
    return f"""\
Run Go {go_version} code that calls the tools as typed functions; you get back what it prints.
Your code is the body of `func Run(ctx context.Context) error`; import lines and top-level funcs/types may come first.
Only the standard library and golang.org/x/sync/errgroup exist (tools are safe to call concurrently); standard-library imports are added automatically from the names you use.
Every tool is `func(ctx, Input) (Output, error)` (no Input when it takes none); input fields above `// optional:` are required. `must(v, err)` returns v or ends the run with err:
  r := must(someTool(ctx, SomeToolInput{{Name: "x"}}))
  fmt.Printf("%+v\\n", r)
{more}
Each call is a fresh program: {limits}. Print summaries, not dumps; result(v) (no return value) also hands v back as JSON.
{kept}"""


_RESOURCES = (
    "Resources and prompts: listResources(ctx, server) ([]ResourceInfo, error), readResource(ctx, uri) "
    "([]ResourceContents, error) (a listed or linked URI; Text or Blob), "
    'getPrompt(ctx, "server.prompt", map[string]string{…}) (PromptResult, error). '
)
_WHOLE_RESULTS = (
    'callToolContent(ctx, "server.tool", map[string]any{…}) (ToolContent, error) gives any tool\'s whole result: '
    "Parts []ContentPart{Type, Text, MIMEType, Data, URI}."
)


def offers_more(view: ToolView | None) -> bool:
    """Whether a server in code mode offers resources or prompts (so the rules name them)."""
    return view is None or any(s.offers for s in view.code_tools.servers)


def search_hint(tier: str) -> str:
    """What the description says when it does not show every declaration."""
    shown = "one line per tool is" if tier == "index" else "the servers and some tool names are"
    return (
        f"Only {shown} shown here: call {SEARCH_TOOL_NAME} with a query or names to get the full Go "
        "declarations before using a tool.\n"
        # The run-time twins of search_go_tools (go_templates/rt/search.go; docs/search.md).
        "Programs can also find and call tools at run time: searchTools(ctx, query) ([]ToolMatch, error) with "
        'ToolMatch{Name, Server, Function, Description, Signature}, and callTool(ctx, "server.tool", '
        "map[string]any{…}) (any, error).\n"
    )
