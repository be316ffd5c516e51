"""A learned weighing of the search signals, judged by leaving one query set out at a time.

    .venv/bin/python bench/learn_rank.py [--features PATH] [--refresh] [--json] [--write [PATH]] [--no-cv] [--linear]

For every query of tests/corpus/search_queries.json and every candidate tool its ranking
considers (gocode.search.index.SearchIndex.signals: the BM25 hits and the tools the models find
most similar), the signals the ranking already computes are read as a row of features
(``SearchIndex.features``: the fused score, BM25's share, coverage, the named-server flags and
name share, each model's similarity as written and without values, rank positions, whether the
tool's verb is the request's). Gradient-boosted trees (scikit-learn, the ``bench`` extra) learn
the log-odds that a candidate is the intended tool; ``--linear`` tries a pairwise logistic
regression instead. It is judged by leave-one-set-out cross-validation: trained on every set
but one, ranked on the one left out, against the hand-set fusion, by top-1 / top-3 / visible
(the intended tool among the 10 an answer shows; a query no tool fits counts as right when the
answer says so, which the weighing does not change) / in full.

The sets in HELD_OUT are never trained on nor cross-validated here: they measure the shipped
trees on phrasings they never saw (``bench/search.py --sets fresh8``).

The features are cached (``--features``, default in the system's temporary directory), as
computing them embeds every query (cached on disk too, so a second computation is quick).
``--write`` trains on every set but HELD_OUT and writes the trees (default
gocode/search/rank_model.json).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.search import FRESH, QUERIES, SETS, corpus, queries  # noqa: E402

# Written after the shipped trees were trained, and kept out of training so they have a set they
# never saw (measured with bench/search.py).
HELD_OUT = ("fresh8",)
TRAINED = tuple(s for s in SETS if s not in HELD_OUT)
TRAINED_FRESH = tuple(s for s in FRESH if s not in HELD_OUT)
from gocode.search import learned  # noqa: E402
from gocode.search.index import FEATURES  # noqa: E402

SHOWN = 10  # tools an answer without a limit shows (in full or a line each)
C = 1.0  # the linear comparison's inverse regularisation, fixed before any cross-validation
TREES, LEAVES = 200, 15


@dataclass
class Query:
    text: str
    split: str
    nofit: bool  # no tool fits it (its set says so)
    fits: bool  # the ranking says some tool fits
    ids: list[int]  # candidate entries
    names: list[str]  # their qualified names
    x: Any  # features, a row per candidate
    y: Any  # 1 for an intended tool


def _features_key() -> str:
    source = (ROOT / "gocode/search/").read_bytes() + QUERIES.read_bytes()
    return hashlib.sha256(source).hexdigest()[:16]


def extract(path: Path, refresh: bool = False) -> list[Query]:
    """Every query's candidates and their features, read from ``path`` when it holds them for
    this search code and query file."""
    key = _features_key()
    if path.is_file() and not refresh:
        with path.open("rb") as f:
            cached = pickle.load(f)
        if cached.get("key") == key:
            return [Query(**q) for q in cached["queries"]]
    index, _ = corpus()
    out = []
    for q in queries():
        sig = index.signals(q["query"])
        if sig is None:
            ids, x, fits = [], np.zeros((0, len(FEATURES))), False
        else:
            ids, x = index.features(sig)
            fits = sig.fits
        names = [index.entries[i].qualified for i in ids]
        y = np.array([float(n in q["tools"]) for n in names])
        out.append(Query(q["query"], q["set"], not q["tools"], fits, ids, names, x, y))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        pickle.dump({"key": key, "queries": [vars(q) for q in out]}, f)
    return out


def rank_of_intended(q: Query, scores: Any) -> int | None:
    """1-based rank of the first intended tool among the SHOWN best by ``scores`` (ties by entry
    order, as the ranking breaks them); a query no tool fits ranks 1 when the answer says so."""
    if q.nofit:
        return None if q.fits else 1
    order = sorted(range(len(q.ids)), key=lambda k: (-scores[k], q.ids[k]))[:SHOWN]
    return next((r + 1 for r, k in enumerate(order) if q.y[k] > 0), None)


def in_full(q: Query, scores: Any) -> bool:
    """Whether the answer shows an intended tool in full: among the best few (at most 3) whose
    fused score is at least half the first's, when some tool fits (search.answer without a
    limit; the learned weighing orders, the fused score says how far behind a tool is)."""
    if q.nofit or not q.fits or not len(q.ids):
        return q.nofit and not q.fits
    fused = current(q)
    order = sorted(range(len(q.ids)), key=lambda k: (-scores[k], q.ids[k]))[:3]
    return any(q.y[k] > 0 and fused[k] >= 0.5 * fused[order[0]] for k in order)


def rates(items: list[Query], score: Any) -> dict[str, float]:
    scores = [score(q) for q in items]
    ranks = [rank_of_intended(q, s) for q, s in zip(items, scores, strict=True)]
    n = len(items)
    return {
        "queries": n,
        "top1": sum(r == 1 for r in ranks) / n,
        "top3": sum(r is not None and r <= 3 for r in ranks) / n,
        "visible": sum(r is not None for r in ranks) / n,
        "full": sum(in_full(q, s) for q, s in zip(items, scores, strict=True)) / n,
    }


def current(q: Query) -> Any:
    return q.x[:, FEATURES.index("fused")] if len(q.ids) else np.zeros(0)


def pairs(items: list[Query]) -> tuple[Any, Any, Any]:
    """Difference rows (intended minus another candidate, and its negation) with sample weights
    that make every query weigh the same."""
    rows, labels, weights = [], [], []
    for q in items:
        pos, neg = q.x[q.y > 0], q.x[q.y == 0]
        if q.nofit or not len(pos) or not len(neg):
            continue
        diff = (pos[:, None, :] - neg[None, :, :]).reshape(-1, q.x.shape[1])
        w = 1.0 / len(diff)
        rows += [diff, -diff]
        labels += [np.ones(len(diff)), np.zeros(len(diff))]
        weights += [np.full(len(diff), w), np.full(len(diff), w)]
    return np.vstack(rows), np.concatenate(labels), np.concatenate(weights)


def train_linear(items: list[Query]) -> Any:
    """One weight per feature (on the features' own scale): a pairwise logistic regression."""
    from sklearn.linear_model import LogisticRegression

    scale = np.vstack([q.x for q in items if len(q.ids)]).std(axis=0)
    scale[scale == 0] = 1.0
    x, y, w = pairs(items)
    model = LogisticRegression(C=C, fit_intercept=False, max_iter=5000)
    model.fit(x / scale, y, sample_weight=w)
    weights = model.coef_[0] / scale
    return lambda q: q.x @ weights if len(q.ids) else np.zeros(0)


def fit_trees(items: list[Query]) -> Any:
    """Gradient-boosted trees on the candidates (intended or not), as fixed before any
    cross-validation: 200 trees of at most 15 leaves, no early stopping, so training repeats."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    usable = [q for q in items if not q.nofit and len(q.ids)]
    x = np.vstack([q.x for q in usable])
    y = np.concatenate([q.y for q in usable])
    model = HistGradientBoostingClassifier(
        max_iter=TREES, learning_rate=0.05, max_leaf_nodes=LEAVES, early_stopping=False, random_state=0
    )
    return model.fit(x, y)


def export(model: Any) -> dict[str, Any]:
    """The trees as plain lists (gocode.search.learned reads them): per tree, per node, the
    feature and threshold it splits on (left when the value is at most the threshold), its
    children, and a leaf's value (a node is a leaf when its feature is -1)."""
    trees = []
    for (predictor,) in model._predictors:
        nodes = predictor.nodes
        trees.append(
            {
                "feature": [
                    int(f) if not leaf else -1 for f, leaf in zip(nodes["feature_idx"], nodes["is_leaf"], strict=True)
                ],
                "threshold": [float(t) for t in nodes["num_threshold"]],
                "left": [int(n) for n in nodes["left"]],
                "right": [int(n) for n in nodes["right"]],
                "value": [float(v) for v in nodes["value"]],
            }
        )
    return {"features": list(FEATURES), "baseline": float(model._baseline_prediction.ravel()[0]), "trees": trees}


def train(items: list[Query]) -> Any:
    trees = learned.Trees.from_json(export(fit_trees(items)))
    # The probability, as search scores a tool (the in-full rule reads the scale).
    return lambda q: 1 / (1 + np.exp(-trees.score(q.x))) if len(q.ids) else np.zeros(0)


def cross_validate(items: list[Query], trainer: Any) -> dict[str, dict[str, dict[str, float]]]:
    out = {}
    for held in TRAINED:
        test = [q for q in items if q.split == held]
        score = trainer([q for q in items if q.split != held])
        out[held] = {"current": rates(test, current), "learned": rates(test, score)}
    for which in ("current", "learned"):
        fresh = [out[s][which] for s in TRAINED_FRESH]
        out.setdefault("fresh mean", {})[which] = {
            k: statistics.mean(r[k] for r in fresh) for k in ("top1", "top3", "visible", "full")
        } | {"queries": sum(r["queries"] for r in fresh)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--features", type=Path, default=Path(tempfile.gettempdir()) / "gocode-learn-rank.pkl")
    parser.add_argument("--refresh", action="store_true", help="compute the features again")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--write",
        type=Path,
        nargs="?",
        const=learned.MODEL_PATH,
        help="train on every set but HELD_OUT and write the trees (JSON)",
    )
    parser.add_argument("--no-cv", action="store_true", help="skip the cross-validation (with --write)")
    parser.add_argument("--linear", action="store_true", help="cross-validate a pairwise logistic regression instead")
    args = parser.parse_args()
    items = [q for q in extract(args.features, args.refresh) if q.split in TRAINED]
    if args.write:
        doc = export(fit_trees(items)) | {"sets": list(TRAINED)}
        args.write.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
        print(f"wrote {args.write}", file=sys.stderr)
    if args.no_cv:
        return 0
    cv = cross_validate(items, train_linear if args.linear else train)
    if args.json:
        print(json.dumps(cv))
        return 0
    print("leave-one-set-out: top-1 / top-3 / visible / in full, current → learned")
    for name, r in cv.items():
        c, lrn = r["current"], r["learned"]
        print(
            f"{name:<11} {c['queries']:>4}  "
            f"{c['top1']:6.1%} {c['top3']:6.1%} {c['visible']:6.1%} {c['full']:6.1%}  →  "
            f"{lrn['top1']:6.1%} {lrn['top3']:6.1%} {lrn['visible']:6.1%} {lrn['full']:6.1%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
