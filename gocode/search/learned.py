"""A learned weighing of the search signals: small gradient-boosted trees, evaluated with numpy.

:meth:`gocode.search.index.SearchIndex.features` reads, for each tool a query's ranking
considers, the signals the ranking computes (the fused score, BM25's share, coverage, the named
server's flags, each model's similarity...). ``rank_model.json`` beside this module holds trees
trained on them by ``bench/learn_rank.py`` (scikit-learn, at training time only): per tree and
node, the feature and threshold it splits on, its children and a leaf's value. A candidate's
score is the sum of its leaves, so reading the trees is plain JSON and scoring is a few numpy
operations per tree level. Figures and how to retrain: docs/search.md.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

log = logging.getLogger("gocode.search")

MODEL_PATH = Path(__file__).with_name("rank_model.json")
DISABLE_ENV = "GOCODE_LEARNED_RANKING"  # "0": the hand-set fusion


def enabled() -> bool:
    return os.environ.get(DISABLE_ENV, "1") != "0"


@dataclass(frozen=True)
class Trees:
    """Regression trees as flat arrays over all their nodes: the feature each splits on, the
    threshold (a value at most it goes left), the children (a leaf's are itself) and a leaf's
    value; ``roots`` are where the trees start, ``depth`` the deepest leaf's depth."""

    features: tuple[str, ...]
    baseline: float
    roots: Any
    depth: int
    feature: Any
    threshold: Any
    left: Any
    right: Any
    value: Any

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Trees:
        import numpy as np

        roots: list[int] = []
        feature: list[int] = []
        threshold: list[float] = []
        left: list[int] = []
        right: list[int] = []
        value: list[float] = []
        depth = 0
        for t in doc["trees"]:
            base = len(feature)
            roots.append(base)
            n = len(t["feature"])
            for k in range(n):
                leaf = t["feature"][k] < 0
                feature.append(0 if leaf else t["feature"][k])
                threshold.append(t["threshold"][k])
                left.append(base + (k if leaf else t["left"][k]))
                right.append(base + (k if leaf else t["right"][k]))
                value.append(t["value"][k] if leaf else 0.0)
            # A tree of n nodes is at most n // 2 deep; count its real depth.
            level, todo = 0, [0]
            while any(t["feature"][k] >= 0 for k in todo):
                todo = [c for k in todo if t["feature"][k] >= 0 for c in (t["left"][k], t["right"][k])]
                level += 1
            depth = max(depth, level)
        return cls(
            tuple(doc["features"]),
            float(doc["baseline"]),
            np.asarray(roots, dtype=np.int64),
            depth,
            np.asarray(feature, dtype=np.int64),
            np.asarray(threshold, dtype=np.float64),
            np.asarray(left, dtype=np.int64),
            np.asarray(right, dtype=np.int64),
            np.asarray(value, dtype=np.float64),
        )

    def score(self, x: Any) -> Any:
        """Each row's score (the log-odds that it is the tool asked for): the sum of its leaves."""
        import numpy as np

        rows = np.arange(x.shape[0])[None, :]
        node = np.repeat(self.roots[:, None], x.shape[0], axis=1)
        for _ in range(self.depth):
            go_left = x[rows, self.feature[node]] <= self.threshold[node]
            node = np.where(go_left, self.left[node], self.right[node])
        return self.baseline + self.value[node].sum(axis=0)


@cache
def trees(features: Sequence[str]) -> Trees | None:
    """The shipped trees, if they read exactly these features (else None: the hand-set fusion)."""
    try:
        doc = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
        model = Trees.from_json(doc)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("learned ranking unavailable (%s); using the hand-set fusion", exc)
        return None
    if model.features != tuple(features):
        log.warning("learned ranking reads other features than search computes; using the hand-set fusion")
        return None
    return model
