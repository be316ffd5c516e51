"""``gocode cache info|prune`` and ``gocode warmup``: the Go module cache and the rest of gocode's cache."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import click

from gocode.cli.common import handle_errors, human_size, say_error, say_progress
from gocode.errors import GocodeError

if TYPE_CHECKING:
    from pathlib import Path


@click.group()
def cache() -> None:
    """gocode's cache: the Go module caches and built programs ($GOCODE_CACHE_DIR; see docs/operations.md)."""


def _current_modcache() -> tuple[Path | None, Path | None]:
    """This gocode's module cache in the cache, and in $GOCODE_STATE_DIR when that is set."""
    from gocode.compile.modcache import ModuleCache, find_toolchain

    try:
        ws = ModuleCache(find_toolchain(fetch=False))  # looking at the cache downloads nothing
    except GocodeError:  # no Go toolchain: every module cache counts as another one's
        return None, None
    return ws.dir, (ws.state if ws.state != ws.dir else None)


@cache.command("info")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def cache_info(as_json: bool) -> None:
    """Show what the cache holds and what housekeeping may remove."""
    from gocode.compile import housekeeping
    from gocode.paths import cache_dir

    current, state = _current_modcache()
    try:
        doc = housekeeping.info(cache_dir(), current)
        if state is not None:
            doc["stateDir"] = housekeeping.info(state.parent, state)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if as_json:
        click.echo(json.dumps(doc))
        return
    click.echo(f"cache:              {doc['cache']}")
    for w in doc["moduleCaches"]:
        tag = "current" if w["current"] else f"idle {w['idleSeconds'] // 3600} h"
        click.echo(f"module cache:       {w['path']}  {human_size(w['bytes'])}  ({tag})")
    for kind, k in sorted(doc["removable"].items()):
        click.echo(f"{kind + ':':<19} {k['count']} entries, {human_size(k['bytes'])}")
    click.echo(f"removable in all:   {human_size(doc['removableBytes'])}")
    click.echo(
        f"Go build cache:     {human_size(doc['goBuildCacheBytes'])} (bounded to "
        f"{human_size(doc['policy']['goBuildCacheMaxBytes'])}: ${housekeeping.GOCACHE_MAX_SIZE_ENV})"
    )
    click.echo(f"Go module cache:    {human_size(doc['moduleCacheBytes'])} (kept: runs need it offline)")
    p = doc["policy"]
    click.echo(
        f"automatic bounds:   {human_size(p['maxBytes'])}, {p['maxAgeSeconds'] / 86400:g} days unused "
        f"(${housekeeping.MAX_SIZE_ENV}, ${housekeeping.MAX_AGE_ENV})"
    )


@cache.command("prune")
@click.option("--max-size", help="Remove least recently used entries until the removable ones fit (e.g. 500M, 2G).")
@click.option("--max-age", help="Remove entries unused for longer than this (e.g. 7d, 12h).")
@click.option("--dry-run", is_flag=True, help="Only say what would be removed.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")
@handle_errors
def cache_prune(max_size: str | None, max_age: str | None, dry_run: bool, as_json: bool) -> None:
    """Remove old built programs, module caches of other gocode versions and leftover run directories.

    Without options it applies the automatic bounds ($GOCODE_CACHE_MAX_SIZE, default 2G;
    $GOCODE_CACHE_MAX_AGE, default 14d); Go's build cache has its own size bound
    ($GOCODE_GOCACHE_MAX_SIZE, default 1G) and the same age. Nothing used in the last hour is removed, nor the
    current module cache. Exit 1 when something could not be removed.
    """
    from gocode.compile import housekeeping
    from gocode.paths import cache_dir

    try:
        base = housekeeping.Policy.from_env()
        policy = housekeeping.Policy(
            max_bytes=housekeeping.parse_size(max_size) if max_size else base.max_bytes,
            max_age_s=housekeeping.parse_age(max_age) if max_age else base.max_age_s,
            gocache_max_bytes=base.gocache_max_bytes,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    current, state = _current_modcache()
    doc = housekeeping.prune_places(cache_dir(), current, state, policy, dry_run=dry_run)
    if as_json:
        click.echo(json.dumps(doc))
    else:
        verb = "would remove" if dry_run else "removed"
        go_build = [e for e in doc["removed"] if e["kind"] == "go-build"]
        if go_build:  # thousands of small files: one line
            click.echo(f"{verb} {len(go_build)} Go build cache files, {human_size(sum(e['bytes'] for e in go_build))}")
        for e in doc["removed"]:
            if e["kind"] == "go-build":
                continue
            click.echo(
                f"{verb} {e['kind']:<9} {human_size(e['bytes']):>10}  idle {e['idleSeconds'] // 60} min  {e['path']}"
            )
        click.echo(
            f"{verb} {len(doc['removed'])} entries, {human_size(doc['freedBytes'])}; {human_size(doc['keptBytes'])} kept"
        )
        for err in doc["errors"]:
            say_error(f"gocode: could not remove {err}")
    sys.exit(1 if doc["errors"] else 0)


@click.command()
@click.option("--force", is_flag=True, help="Rebuild even if the module cache is ready.")
@handle_errors
def warmup(force: bool) -> None:
    """Download and pre-build the Go module cache (the whole standard library too), so later runs need no network."""
    from gocode.compile.modcache import ModuleCache
    from gocode.search import semantic

    ws = ModuleCache()
    ws.fetch_go(say_progress)  # on a machine without Go: downloaded first, with its progress
    say_progress(f"using {ws.toolchain.go} ({ws.toolchain.version}), cache {ws.cache}")
    ws.warmup(say_progress, force=force, full=True)  # the whole standard library too: nothing left for later
    for error in semantic.fetch_all(say_progress):  # search still works, with the others or by words alone
        say_error(f"gocode: warning: could not fetch search model {error}; search_go_tools ranks without it")
