"""Finding tools: a ranked full-text index over a tool set, and lookup by the names a model writes.

A :class:`SearchIndex` is built once per tool set (pure: from the discovered tools and their Go
IR, no I/O) and answers many queries. Ranking is BM25 (:mod:`gocode.search.bm25`) by tantivy (a Rust search engine with no
Python dependencies, ~3 ms to import, so the CLI stays quick) over four fields per tool:

* ``name``: the tool's name and Go function name split into words (``get_current_time``,
  ``getCurrentTime`` → get current time) and its title;
* ``server``: the server's name split into words;
* ``desc``: the first sentence of the description (what the tool is for, rather than how);
* ``body``: the rest of the description and the parameters' names and descriptions.

Text is split on case changes as well as punctuation, stop words are dropped, words are stemmed
(English Snowball), and a few abbreviations every developer writes are spelled out on both sides
(``pr`` → pull request). A query also matches its words run together (``on call`` → oncall) and,
at a lower weight, related words (``show`` → get, list). Queries are built from analysed terms,
never parsed, so no text a model sends can be query syntax. Scores are weighted by how much of
the query a tool covers; the values a request carries (quoted text, URLs, identifiers such as
``parse_config``) count little. A query that names a server ranks its tools first, the one whose
name the request says before its siblings. Fields, weights and figures: docs/search.md.

:meth:`SearchIndex.lookup` accepts MCP tool names, Go function names in any case, and
``server.tool``; :meth:`SearchIndex.suggest` names the tools close to a name that matches none (if
any is), and :meth:`SearchIndex.nearest` the tools nearest a query that none fits.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import functools
import itertools
import math
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gocode.errors import EmbeddingUnavailable
from gocode.schema.ir import Package
from gocode.schema.names import words
from gocode.search import background, bm25, learned, parts
from gocode.search import semantic as semantic_mod
from gocode.search.analysis import (
    STOP_WORDS,
    WORD,
    analyzer,
    fold,
    prepare,
    query_terms,
    split_values,
)
from gocode.search.bm25 import RELATED_BOOST, RERANK_DEPTH, Lexical
from gocode.search.entries import ToolEntry, entries
from gocode.search.limits import DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS
from gocode.toolset import ToolSet

# Fusing BM25 with meaning (see search()): the share of the lexical score in a tool's fused
# score; chosen on the query sets written before fresh4 (docs/search.md).
_LEXICAL_SHARE = 0.35
# A name written in other words is close to a tool's when this share of their words is common,
# not counting words in more than this share of the tools' names.
_SAME_WORDS = 0.5
_GENERIC_NAME_SHARE = 0.1
NAME_ALL = 6  # a tool set this small is named whole when a name is close to none of it
_MEANING_DESC_CHARS = 400
# A request carrying values ("move PROJ-142 to Done", "find callers of parse_config") is also
# embedded without them, and the two similarities are mixed, this share for the request without
# its values: the values pull the full request towards tools about them.
_ASKED_SHARE = 0.5
# A query that names a server, its product or vendor ("… in PagerDuty", "according to Sentry")
# means that server's tools: they get this much more fused score (on its 0–1 scale), enough to
# rank them first unless the query is about something else entirely. Chosen on the query sets
# written before fresh5 (docs/search.md).
_NAMED_BONUS = 0.3
# Words a request uses for other things than naming a server, whatever servers are called
# ("unstage everything I added" is not about server-everything): stop words and indefinite pronouns.
_NOT_NAMES = frozenset(STOP_WORDS) | {"everything", "anything", "something", "nothing", "everyone", "anyone"}
# Among the tools of a server the query names, the one whose name the request says ("approve
# merge request" → approve_merge_request, not get_merge_request_approval_state) gets up to this
# much more fused score, by the share of its name's words the query has (server words aside).
# 0.25 to 0.4 did about as well on the query sets (docs/search.md).
_NAME_SHARE = 0.3
# What words found only in a request's values (quoted text, URLs, identifiers, PROJ-142) weigh
# in BM25, against 1 for the words that say what is asked.
_VALUE_BOOST = 0.3


def _meaning_text(e: ToolEntry) -> str:
    """What the embedding model reads of a tool: name words, server, description, parameters."""
    schema = e.info.input_schema if isinstance(e.info.input_schema, dict) else {}
    props = schema.get("properties")
    params = " ".join(" ".join(words(str(p))) for p in props) if isinstance(props, dict) else ""
    return f"{' '.join(words(e.tool))} ({e.server}): {e.description[:_MEANING_DESC_CHARS]} Parameters: {params}"


@dataclass(frozen=True)
class Ranking:
    """A query's best tools with their scores (best first), and whether any of them fits it."""

    scored: tuple[tuple[ToolEntry, float], ...]
    fits: bool

    @property
    def tools(self) -> list[ToolEntry]:
        return [e for e, _ in self.scored]


# What a learned weighing of the signals reads per candidate tool (SearchIndex.features), then per
# model: its scaled similarity, and its raw similarity as written and without values, each less
# the best tool's.
_BASE_FEATURES = (
    "fused",
    "fused_gap",
    "lexical",
    "coverage",
    "named",
    "name_cover",
    "named_name_cover",
    "verb",
    "lexical_rank",
    "meaning_rank",
    "description_length",
)
_MODEL_FEATURES = ("scaled", "full_gap", "without_gap")
_FEATURE_MODELS = tuple(spec.name for spec in semantic_mod.MODELS)
FEATURES = _BASE_FEATURES + tuple(f"{spec.name}:{f}" for spec in semantic_mod.MODELS for f in _MODEL_FEATURES)


@dataclass(frozen=True)
class Similarity:
    """One model's cosine similarity of every tool to a request as written and without its values."""

    spec: Any
    full: Any
    without: Any  # the same as ``full`` for a request carrying no values
    # The mean and spread of the request's similarity to tools in general (None without a
    # background for the model: gocode.search.background).
    ground: tuple[float, float] | None = None

    @functools.cached_property
    def mixed(self) -> Any:
        return self.full if self.without is self.full else (1 - _ASKED_SHARE) * self.full + _ASKED_SHARE * self.without

    @functools.cached_property
    def scaled(self) -> Any:
        """The mixed similarity scaled to [0, 1] over the band of the most similar tools (0 below)."""
        sim = self.mixed
        band = sim[sim.argsort()[-RERANK_DEPTH:]]
        low, high = float(band.min()), float(band.max())
        return ((sim - low) / max(high - low, 1e-6)).clip(0.0, None)


@dataclass(frozen=True)
class _QueryWords:
    base: set[str]  # the query's words (without its values), for the coverage factor
    own: set[str]  # its terms, words run together included
    related: set[str]  # the related terms it implies


@dataclass(frozen=True)
class Signals:
    """What ranking knows of a query's candidate tools (entry indices): the fused score, whether
    any tool fits, and what the score is made of (similarities empty without models)."""

    fused: dict[int, float]
    fits: bool
    lexical: dict[int, float]  # BM25 with the coverage factor, as a share of the best hit
    named: frozenset[int]  # the entries of servers the query names
    similarities: tuple[Similarity, ...]
    words: _QueryWords | None
    learned: dict[int, float] | None = None  # the learned weighing's scores, when it is used

    @property
    def order(self) -> dict[int, float]:
        """What the ranking orders by: the learned weighing's scores, else the fused ones."""
        return self.fused if self.learned is None else self.learned


class SearchIndex:
    """BM25 over one tool set, in memory or kept on disk (:mod:`gocode.search.kept_index`), fused
    with a ranking by meaning when the embedding model is installed (:mod:`gocode.search.semantic`).
    Immutable once built; safe to share between threads."""

    def __init__(self, tools: Iterable[ToolEntry], *, semantic: bool = True, kept: Path | None = None) -> None:
        self.entries = list(tools)
        # Where BM25's index of these tools is kept on disk (gocode.search.kept_index), if anywhere.
        self._kept = kept
        # The embedding models load on the first query (a second or more): a lookup by name,
        # as `gocode describe` makes, never needs them.
        self._semantic = semantic and bool(self.entries)
        self._loaded: tuple[list[Any], list[Any]] | None = None
        self._load_lock = threading.Lock()
        # BM25's index is built on the first query too: a lookup by name needs only the table below.
        self._lexical: Lexical | None = None
        self._lexical_lock = threading.Lock()
        self._verb_cache: list[str] | None = None
        self._by_name: dict[str, list[int]] = {}
        for i, e in enumerate(self.entries):
            for key in {fold(e.tool), fold(e.function), fold(e.server) + "." + fold(e.tool)}:
                self._by_name.setdefault(key, []).append(i)
            self._by_name.setdefault(fold(e.server) + "." + fold(e.function), []).append(i)

    @classmethod
    def build(cls, toolset: ToolSet, package: Package, *, semantic: bool = True, keep: bool = False) -> SearchIndex:
        """The index of a tool set; with ``keep``, BM25's part is read from (or kept in) the cache."""
        kept = None
        if keep:
            from gocode.search import kept_index

            kept = kept_index.entry_dir(toolset)
        return cls(entries(toolset, package), semantic=semantic, kept=kept)

    def _lex(self) -> Lexical:
        """BM25's index, what each tool mentions and the names of servers, built once (or
        read from where it is kept)."""
        with self._lexical_lock:
            if self._lexical is None:
                if self._kept is None:
                    self._lexical = bm25.build(self.entries)
                else:
                    from gocode.search import kept_index

                    build = functools.partial(bm25.build, self.entries)
                    self._lexical = kept_index.load_or_build(self._kept, build, bm25.reopen_lexical, bm25.lexical_state)
            return self._lexical

    @property
    def ranker(self) -> str:
        """How queries are ranked: "bm25" and the embedding models in use, "+"-joined."""
        return "+".join(["bm25", *(m.spec.name for m in self._models)])

    @property
    def _models(self) -> list[Any]:
        return self._embeddings()[0]

    @property
    def _vectors(self) -> list[Any]:
        return self._embeddings()[1]

    def load_models(self) -> None:
        """Build BM25's index, load the embedding models and embed the tools now (a server's
        warm-up), not on a query."""
        self._lex()
        for model in self._models:  # loaded even when every vector so far was cached
            with contextlib.suppress(EmbeddingUnavailable):
                model.embedder()

    def _embeddings(self) -> tuple[list[Any], list[Any]]:
        """The embedding models in use and each one's tool vectors, loaded once."""
        with self._load_lock:
            if self._loaded is None:
                # A model is loaded only for vectors not cached: tools not embedded before, a
                # query not asked before (gocode.search.semantic.Model).
                models = semantic_mod.models() if self._semantic else []
                texts = [_meaning_text(e) for e in self.entries] if models else []
                used, vectors = [], []
                for model in models:
                    with contextlib.suppress(EmbeddingUnavailable):  # left out, as the log says
                        vectors.append(semantic_mod.document_vectors(model, texts))
                        used.append(model)
                self._loaded = (used, vectors)
            return self._loaded

    def search(self, query: str, limit: int = DEFAULT_LIMIT, *, within: float = 0.0) -> list[ToolEntry]:
        """The tools best matching a free-text query, best first (none for a query without words);
        with ``within``, only those scoring at least that share of the best (by meaning too)."""
        ranked = self.ranking(query, limit).scored
        if ranked and within > 0:
            ranked = tuple((e, score) for e, score in ranked if score >= within * ranked[0][1])
        return [e for e, _ in ranked]

    def ranking(self, query: str, limit: int = DEFAULT_LIMIT) -> Ranking:
        """The tools best matching a query with their scores, and whether any of them fits it:
        a tool that shares at least half of the query's words, or that the embedding models find
        similar enough (ModelSpec.floor). A query nothing fits still gets the nearest tools."""
        sig = self.signals(query)
        if sig is None:
            return Ranking((), False)
        limit = max(1, min(limit, MAX_LIMIT))
        # Ordered by the learned weighing when it is used; the fused score stays the score, as
        # it says how far behind the first a tool is (an answer shows the close ones in full).
        order = sig.order
        ranked = sorted(order, key=lambda i: (-order[i], i))[:limit]
        return Ranking(tuple((self.entries[i], sig.fused[i]) for i in ranked), sig.fits)

    def signals(self, query: str) -> Signals | None:
        """What ranking a query knows of its candidate tools (None for a query without words):
        the fused score and the signals it is made of."""
        own, related = query_terms(query)
        if not own or not self.entries:
            return None
        analysed = set(analyzer().analyze(prepare(query)))  # the query's words, stop words dropped
        asked, given = split_values(query)
        weights: dict[str, float] = {}
        if given:
            # Words only inside values ("parse_config", 'Roadmap') count little: a tool is for
            # what is asked, not for the values it is given.
            own, related = query_terms(asked)
            weights = {t: _VALUE_BOOST for t in query_terms(given)[0] if t not in own}
            analysed_asked = set(analyzer().analyze(prepare(asked)))
            analysed = analysed_asked or analysed
        base = analysed or set(own)
        lexical = self._bm25(base, own, related, RERANK_DEPTH, weights)
        named = self.named(query)
        own_set, related_set = set(own), set(related)
        bonus = {i: _NAMED_BONUS + _NAME_SHARE * self._name_cover(i, own_set, related_set) for i in named}
        terms = self._lex().terms
        covered = max((len(base & terms[i]) / len(base) for i, _ in lexical), default=0.0)
        # A query naming a server fits it: it asks for that server's tools, in words or not.
        fits = covered >= 0.5 or bool(named)
        best = (lexical[0][1] if lexical else 0.0) or 1.0
        share = {i: s / best for i, s in lexical}
        if not self._models or not analysed:
            # Without a model, or for a query of stop words only (nothing to mean).
            scores = {i: s + bonus.get(i, 0.0) for i, s in share.items()}
            return Signals(scores, fits, share, named, (), None)
        # A convex combination of the two scores, each scaled to its own query: BM25 by its best
        # hit, similarity over the band of the 50 most similar tools (0 below it). Unlike fusing
        # ranks, it keeps how far ahead a hit is: a tool naming the request's rare words outranks
        # a merely similar one, and a clear paraphrase outranks weak lexical hits.
        sims = self._similarities(query)
        meaning, margin = self._meaning(sims)
        fused = {i: _LEXICAL_SHARE * s for i, s in share.items()}
        if lexical:
            candidates = set(fused) | {int(i) for i in (meaning > 0).nonzero()[0]}
        else:
            # No tool shares a word with the query: a paraphrase, or nonsense ("zzzqqq",
            # "banana"). Only tools the models find similar enough count (ModelSpec.floor).
            candidates = {int(i) for i in self._fitting(sims, margin).nonzero()[0]}
        for i in candidates | named:
            fused[i] = fused.get(i, 0.0) + (1 - _LEXICAL_SHARE) * float(meaning[i])
        for i, extra in bonus.items():
            fused[i] += extra
        fits = fits or bool(self._fitting(sims, margin).any())
        sig = Signals(fused, fits, share, named, sims, _QueryWords(base, own_set, related_set))
        trees = learned.trees(FEATURES) if learned.enabled() else None
        if trees is None or tuple(s.spec.name for s in sims) != _FEATURE_MODELS:
            return sig  # the trees read both models' similarities: with one, the hand-set fusion
        # The learned weighing of the same signals (gocode/search/learned.py): the tools are
        # ordered by the probability the trees give each of being the one asked for.
        ids, x = self.features(sig)
        odds = trees.score(x)
        scores = {i: float(1 / (1 + math.exp(-o))) for i, o in zip(ids, odds, strict=True)}
        return dataclasses.replace(sig, learned=scores)

    def features(self, sig: Signals) -> tuple[list[int], Any]:
        """The candidates of a query's signals (entry indices) and a row of FEATURES for each,
        for a learned weighing of the signals (bench/learn_rank.py trains one)."""
        import numpy as np

        ids = sorted(sig.fused)
        if not ids or not sig.similarities or sig.words is None:
            return ids, np.zeros((len(ids), len(FEATURES)))
        lex = self._lex()
        w = sig.words
        rows = []
        lex_rank = {i: r for r, i in enumerate(sorted(sig.lexical, key=lambda i: (-sig.lexical[i], i)))}
        meaning = sum(s.scaled for s in sig.similarities) / len(sig.similarities)
        by_meaning = np.argsort(-meaning, kind="stable")
        meaning_rank = {int(i): r for r, i in enumerate(by_meaning[: 4 * RERANK_DEPTH])}
        best_full = [float(s.full.max()) for s in sig.similarities]
        best_without = [float(s.without.max()) for s in sig.similarities]
        top = max(sig.fused.values())
        verbs = self._verbs()
        for i in ids:
            verb = verbs[i]
            named = float(i in sig.named)
            cover = self._name_cover(i, w.own, w.related)
            row = [
                sig.fused[i],
                sig.fused[i] - top,
                sig.lexical.get(i, 0.0),
                len(w.base & lex.terms[i]) / len(w.base) if w.base else 0.0,
                named,
                cover,
                named * cover,
                1.0 if verb in w.own else RELATED_BOOST if verb in w.related else 0.0,
                1.0 / (1 + lex_rank[i]) if i in lex_rank else 0.0,
                1.0 / (1 + meaning_rank.get(i, 4 * RERANK_DEPTH)),
                min(len(self.entries[i].description), 2000) / 2000,
            ]
            for s, bf, bw in zip(sig.similarities, best_full, best_without, strict=True):
                row += [float(s.scaled[i]), float(s.full[i]) - bf, float(s.without[i]) - bw]
            rows.append(row)
        return ids, np.asarray(rows)

    def _verbs(self) -> list[str]:
        """Per entry: the first word of its name that says what it does (its verb, mostly)."""
        names = self._lex().name_terms
        with self._lexical_lock:
            if self._verb_cache is None:
                self._verb_cache = [
                    next((t for t in analyzer().analyze(prepare(e.tool)) if t in names[i]), "")
                    for i, e in enumerate(self.entries)
                ]
            return self._verb_cache

    @functools.cached_property
    def actions(self) -> frozenset[str]:
        """The words that start a part of a request (gocode.search.parts): the first word of each
        tool's name that says what it does, as written, and the words related to them."""
        names = self._lex().name_terms
        verbs = set()
        for i, e in enumerate(self.entries):
            verbs.update(
                next((w for w in prepare(e.tool).split() if set(analyzer().analyze(w)) & names[i]), "").split()
            )
        return parts.action_words(verbs)

    def split(self, query: str) -> list[str]:
        """A request's parts (gocode.search.parts): one for a request asking one thing."""
        servers = {w.lower() for e in self.entries for w in WORD.findall(e.server)}
        return parts.split(query, self.actions, frozenset(self._lex().named) | servers)

    def _name_cover(self, i: int, own: set[str], related: set[str]) -> float:
        """How much of a tool's name the query says: the share of its name's words (server
        words aside) among the query's own terms, a related term counting RELATED_BOOST."""
        terms = self._lex().name_terms[i]
        if not terms:
            return 0.0
        # Counted, not summed as floats, so the share does not depend on the set's order.
        said = sum(1 for t in terms if t in own)
        implied = sum(1 for t in terms if t not in own and t in related)
        return (said + RELATED_BOOST * implied) / len(terms)

    def in_context(self, part: str, query: str) -> str:
        """A part of a request as it is searched: with the words of the whole request that name a
        server and the part does not say ("assign it to me", of "mark Sentry issue X resolved and
        assign it to me", is about Sentry)."""
        said = {w.lower() for w in WORD.findall(part)}
        named = self._lex().named
        words = [w for w in WORD.findall(query) if w.lower() in named and w.lower() not in said | _NOT_NAMES]
        return " ".join([part, *dict.fromkeys(words)])

    def named(self, query: str) -> frozenset[int]:
        """The entries of the servers a query names (by server, product or vendor name)."""
        raw = [w.lower() for w in WORD.findall(query) if w.lower() not in _NOT_NAMES]
        named = self._lex().named
        out: set[int] = set()
        for w in raw + [a + b for a, b in itertools.pairwise(raw)]:
            out |= named.get(w, frozenset())
        return frozenset(out)

    def _similarities(self, query: str) -> tuple[Similarity, ...]:
        """Each model's similarities of every tool to the query, as written and without its values."""
        out = []
        asked, given = split_values(query)
        asked = " ".join(asked.split()) if given else ""
        grounds = background.backgrounds()
        for model, vectors in zip(self._models, self._vectors, strict=True):
            # One text per call: a query's vector is cached on disk by its text (semantic.Model).
            vector = model.embed([query[:MAX_QUERY_CHARS]], query=True)[0]
            full = vectors @ vector
            without = vectors @ model.embed([asked[:MAX_QUERY_CHARS]], query=True)[0] if asked else full
            ground = grounds.get(model.spec.name)
            out.append(Similarity(model.spec, full, without, ground.spread(vector) if ground is not None else None))
        return tuple(out)

    def _meaning(self, sims: tuple[Similarity, ...]) -> tuple[Any, Any]:
        """Per tool: the models' mean similarity to the query, scaled to [0, 1] over the band of
        the most similar tools; and the mean margin of the raw similarity over each model's floor."""
        meaning: Any = 0.0
        margin: Any = 0.0
        for sim in sims:
            meaning = meaning + sim.scaled
            margin = margin + (sim.full - sim.spec.floor)
        n = len(sims)
        return meaning / n, margin / n

    def _fitting(self, sims: tuple[Similarity, ...], margin: Any) -> Any:
        """Per tool, whether it fits the request by meaning: the models' mean similarity clears
        their floors, or the tool stands out from the request's similarity to tools in general
        by more than chance would give among this many tools (gocode.search.background)."""
        fitting = margin >= 0
        if not sims or any(s.ground is None for s in sims):
            return fitting
        standout = sum((s.full - s.ground[0]) / s.ground[1] for s in sims if s.ground is not None) / len(sims)
        return fitting | (standout >= background.threshold(len(self.entries)))

    def _bm25(
        self, base: set[str], own: list[str], related: list[str], limit: int, extra: dict[str, float] | None = None
    ) -> list[tuple[int, float]]:
        return bm25.search(self._lex(), base, own, related, limit, extra)

    def lookup(self, name: str) -> list[ToolEntry]:
        """The tools a name means: an MCP tool name, a Go function name (any case), or
        ``server.tool``; several when the same tool name exists on several servers."""
        name = name.strip()
        keys = [fold(name)]
        if "." in name:
            server, _, tool = name.rpartition(".")
            keys.insert(0, fold(server) + "." + fold(tool))
        for key in keys:
            found = self._by_name.get(key)
            if found:
                return [self.entries[i] for i in dict.fromkeys(found)]
        return []

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Function names close to ``name`` for a "did you mean": spelled alike, else named in
        mostly the same words (fetch_weather → getWeather, github_create_issue → createIssue);
        none when no tool is close, however few there are."""
        bare = name.rpartition(".")[2]
        by_fold = {fold(e.function): e.function for e in self.entries}
        by_fold.update({fold(e.tool): e.function for e in self.entries})
        close = difflib.get_close_matches(fold(bare), list(by_fold), n=n, cutoff=0.7)
        out = [by_fold[c] for c in close]
        if not out and self.entries:
            # Names in mostly the same words (Dice), counting only words that tell tools apart:
            # a tool's name words other than its server's shared ones, and not words in many
            # names (get, list), which make getMe no closer to get_weather.
            names = self._lex().name_terms
            df = Counter(t for terms in names for t in terms)
            generic = {t for t, k in df.items() if k > max(1, _GENERIC_NAME_SHARE * len(names))}
            said = set(analyzer().analyze(prepare(bare))) - generic
            scored = []
            for i, terms in enumerate(names):
                common = len(said & terms)
                if common:
                    scored.append((-2 * common / (len(said) + len(terms - generic)), i))
            out = [self.entries[i].function for score, i in sorted(scored) if -score >= _SAME_WORDS]
        return list(dict.fromkeys(out))[:n]

    def nearest(self, query: str, n: int = DEFAULT_LIMIT) -> list[ToolEntry]:
        """The tools nearest a query, to show what there is when none fits it: its ranking's,
        else the most similar by meaning however far below the models' floor, else (without
        models) all of a handful of tools."""
        n = max(1, min(n, MAX_LIMIT))
        got = self.ranking(query, n).tools
        if got or not self.entries:
            return got
        if self._models:
            meaning, _ = self._meaning(self._similarities(query))
            order = sorted(range(len(self.entries)), key=lambda i: (-float(meaning[i]), i))
            return [self.entries[i] for i in order[:n]]
        return self.entries[:n] if len(self.entries) <= NAME_ALL else []


# --- the search_go_tools tool ---------------------------------------------------------------------
