"""Write gocode/search/background.npz: per embedding model, the mean and the top principal
components of the corpus tools' vectors (what search measures a tool's similarity to a request
against when deciding whether it fits; gocode/search/background.py).

    .venv/bin/python bench/background.py            # write it
    .venv/bin/python bench/background.py --check    # how "fits by meaning" does per server

``--check`` serves each corpus server alone and asks it every query of
tests/corpus/search_queries.json: a query "fits by meaning" when, for some tool of that server,
the models' mean similarity clears their floors (the rule before) or the tool stands out from
the background by gocode.search.background.threshold(server's tools). It counts, per rule and
STANDOUT, the queries of the server asked that fit (want many) and other servers' queries that
fit (want few).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.search import corpus, queries  # noqa: E402
from gocode.search import background  # noqa: E402

COMPONENTS = 64  # the sd of a request's similarities within 5% of the full covariance's


def write() -> None:
    index, _ = corpus()
    arrays: dict[str, np.ndarray] = {}
    for model, vectors in zip(index._models, index._vectors, strict=True):
        v = np.asarray(vectors, dtype=np.float64)
        w, u = np.linalg.eigh(np.cov(v.T, bias=True))
        w, u = w[::-1], u[:, ::-1]
        name = model.spec.name
        arrays[f"{name}:mean"] = v.mean(axis=0).astype(np.float32)
        arrays[f"{name}:basis"] = (u[:, :COMPONENTS] * np.sqrt(np.maximum(w[:COMPONENTS], 0))).T.astype(np.float32)
        arrays[f"{name}:rest"] = np.float64(w[COMPONENTS:].sum() / (len(w) - COMPONENTS))
    np.savez_compressed(background.BACKGROUND_PATH, **arrays)
    print(f"wrote {background.BACKGROUND_PATH} ({background.BACKGROUND_PATH.stat().st_size} bytes)")


def check() -> None:
    index, _ = corpus()
    items = queries()
    servers = np.array([e.server for e in index.entries])
    wanted = [{t.split(".")[0] for t in q["tools"]} for q in items]
    grounds = background.backgrounds()
    full, z = [], []
    for model, vectors in zip(index._models, index._vectors, strict=True):
        q = np.stack([model.embed([it["query"]], query=True)[0] for it in items])
        sims = q @ np.asarray(vectors).T
        full.append(sims - model.spec.floor)
        spread = [grounds[model.spec.name].spread(row) for row in q]
        z.append((sims - np.array([[m] for m, _ in spread])) / np.array([[s] for _, s in spread]))
    margin, standout = np.mean(full, axis=0), np.mean(z, axis=0)
    for rule in ("floors", *(f"floors or standout {a}" for a in (1.0, 1.5, 2.0, 2.5))):
        asked = other = asked_n = other_n = 0
        for s in sorted(set(servers)):
            ids = np.where(servers == s)[0]
            fits = margin[:, ids].max(axis=1) >= 0
            if rule != "floors":
                a = float(rule.rsplit(" ", 1)[1])
                fits |= standout[:, ids].max(axis=1) >= a + background.threshold(len(ids)) - background.STANDOUT
            for i, f in enumerate(fits):
                if s in wanted[i]:
                    asked, asked_n = asked + int(f), asked_n + 1
                else:
                    other, other_n = other + int(f), other_n + 1
        print(f"{rule:26s} fit: asked server {asked}/{asked_n}, other servers {other}/{other_n}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="measure instead of writing")
    (check if parser.parse_args().check else write)()
