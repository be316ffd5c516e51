"""How similar a request is to tools in general, per embedding model: the background a tool's
similarity is measured against when deciding whether the tool fits the request by meaning.

A fixed floor on the raw similarity (``ModelSpec.floor``) was set on a large tool set, where
nonsense reaches it against one tool among a thousand; against a handful of tools with terse
descriptions it turns away plain questions ("is it raining in tokyo" for ``get_weather``). How
far a tool stands out from the request's similarity to tools in general, in standard
deviations, does not depend on the tool set's size, and a tool set of N tools is held to what
chance would give among N (:func:`threshold`).

``background.npz`` beside this module holds, per model, the mean of the vectors of the corpus
tools (tests/corpus/real, what the models read of each) and their covariance as its top
principal components plus the rest spread evenly, so the mean and spread of a request's
similarities to them are two dot products. ``bench/background.py`` writes it. Pure but for
reading that file (numpy is imported only when a vector is scored).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

BACKGROUND_PATH = Path(__file__).with_name("background.npz")
# A tool stands out enough to fit when its similarity is this many standard deviations above
# the request's mean similarity to tools in general, beyond the largest of N chance draws
# (about sqrt(2 ln N)). Chosen on the query sets served one corpus server at a time
# (bench/background.py --check): 2.0 adds fits for 20 of 1,264 requests of the server asked
# (to 1,099) and for 13 of 53,256 requests of other servers; 1.0 adds 154 of the latter.
STANDOUT = 2.0


@dataclass(frozen=True)
class Background:
    """One model's background: the corpus tools' mean vector, their covariance's top
    components (each scaled by the square root of its variance) and the variance left per
    remaining dimension."""

    mean: Any
    basis: Any
    rest: float

    def spread(self, query: Any) -> tuple[float, float]:
        """The mean and standard deviation of a query vector's similarities to the background."""
        import numpy as np

        projected = self.basis @ query
        unit = np.einsum("ij,ij->i", self.basis, self.basis)
        along = float((projected**2).sum())
        # The part of the query outside the kept components sees the evenly spread rest.
        outside = max(float(query @ query) - float(((projected**2) / np.maximum(unit, 1e-12)).sum()), 0.0)
        return float(self.mean @ query), math.sqrt(max(along + self.rest * outside, 1e-12))


@cache
def backgrounds() -> dict[str, Background]:
    """Each model's background, by model name (none when the file is missing or unreadable)."""
    import numpy as np

    try:
        with np.load(BACKGROUND_PATH) as doc:
            names = {k.split(":", 1)[0] for k in doc.files}
            return {n: Background(doc[f"{n}:mean"], doc[f"{n}:basis"], float(doc[f"{n}:rest"])) for n in sorted(names)}
    except (OSError, KeyError, ValueError):
        return {}


def threshold(tools: int) -> float:
    """How far (in standard deviations) a tool must stand out to fit, in a set of ``tools``."""
    return STANDOUT + math.sqrt(2 * math.log(max(tools, 2)))
