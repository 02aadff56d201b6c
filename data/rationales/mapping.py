"""A 2-D map of rationales: TF-IDF -> TruncatedSVD -> t-SNE, with KMeans clusters.

scikit-learn's t-SNE (already a requirement) rather than UMAP: the maps are a few thousand
points at most (larger sets are sampled), where t-SNE takes seconds and UMAP would add
umap-learn and pynndescent to the install for no visible gain. Clusters are KMeans on the
SVD vectors (the reduced TF-IDF, not the 2-D picture), each labelled by its three most
distinctive terms (:func:`data.rationales.keywords.distinctive_terms`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.decomposition import TruncatedSVD
from sklearn.manifold import TSNE
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from data.rationales.keywords import distinctive_terms, vectorizer
from data.schema import DataError

#: Fewer rationales than this cannot be mapped meaningfully.
MIN_POINTS = 5


@dataclass(frozen=True)
class RationaleMap:
    """The map of :func:`rationale_map`.

    Attributes
    ----------
    points : pandas.DataFrame
        The mapped rows of the input frame with x, y, cluster (int) and cluster_label.
    clusters : pandas.DataFrame
        cluster, cluster_label, rationales (size), keywords (top terms, comma-joined).
    n_total : int
        Rationales given; ``len(points)`` of them were mapped (a seeded sample when more
        than ``max_points``).
    explained : float
        Share of the TF-IDF variance kept by the SVD.
    """

    points: pd.DataFrame
    clusters: pd.DataFrame
    n_total: int
    explained: float

    @property
    def sampled(self) -> bool:
        return len(self.points) < self.n_total


def rationale_map(
    frame: pd.DataFrame,
    *,
    n_clusters: int | None = None,
    max_points: int = 1500,
    n_components: int = 50,
    random_state=None,
) -> RationaleMap:
    """Place each rationale on a plane and group them into labelled clusters.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of :func:`data.rationales.rationales` (a ``rationale`` column).
    n_clusters : int, optional
        KMeans clusters; default ``round(sqrt(n / 25))`` clipped to 2..10.
    max_points : int
        At most this many rationales are mapped (a sample, seeded by ``random_state``).
    n_components : int
        SVD dimensions before t-SNE and KMeans.
    random_state : int, numpy Generator or None
        Seeds the sample, the SVD, t-SNE and KMeans (pass an int for a reproducible map).

    Returns
    -------
    RationaleMap

    Raises
    ------
    DataError
        Fewer than :data:`MIN_POINTS` rationales, no words to count, or every rationale the
        same (nothing to place).
    """
    n_total = len(frame)
    if n_total < MIN_POINTS:
        raise DataError(
            f"Only {n_total} rationale(s): a map needs at least {MIN_POINTS}. Pick a judge "
            "or criterion with more explained answers."
        )
    rng = np.random.default_rng(random_state)
    seed = int(rng.integers(2**31 - 1))
    pts = frame.reset_index(drop=True)
    if n_total > max_points:
        pick = np.sort(rng.choice(n_total, size=max_points, replace=False))
        pts = pts.iloc[pick].reset_index(drop=True)
    vec = vectorizer(len(pts))
    try:
        tfidf = vec.fit_transform(pts["rationale"].astype(str))
    except ValueError as err:
        raise DataError(f"The rationales have no words left to map ({err}).") from err
    terms = vec.get_feature_names_out()
    # One BLAS / OpenMP thread: on a busy machine more threads made the map 6x slower
    # (a 577-rationale map: 17 s with the default threads, 2.4 s with one).
    with threadpool_limits(limits=1):
        k = min(n_components, tfidf.shape[1] - 1, len(pts) - 1)
        if k >= 2:
            svd = TruncatedSVD(n_components=k, random_state=seed)
            reduced = svd.fit_transform(tfidf)
            explained = float(svd.explained_variance_ratio_.sum())
        else:
            reduced, explained = tfidf.toarray(), 1.0
        reduced = normalize(reduced)
        n_distinct = len(np.unique(np.round(reduced, 8), axis=0))
        if n_distinct < 2 or not np.isfinite(reduced).all():
            # t-SNE's PCA start divides by a zero spread and its Barnes-Hut tree then
            # recurses without end on the NaN points: a segfault that took the server down
            # (an Arena-Hard file whose every rationale was "My final verdict is ...")
            raise DataError(
                f"All {len(pts):,} rationales say the same thing once the verdicts are "
                "stripped: nothing to map. Pick a judge whose answers explain themselves."
            )
        perplexity = float(min(30.0, max(2.0, (len(pts) - 1) / 3)))
        xy = TSNE(
            n_components=2,
            perplexity=perplexity,
            init="pca",
            random_state=seed,
            max_iter=500,
            n_jobs=1,
        ).fit_transform(reduced)
        if n_clusters is None:
            n_clusters = int(np.clip(round(np.sqrt(len(pts) / 25)), 2, 10))
        # never more clusters than distinct rationales ("Summary #1 is more coherent" x 300)
        n_clusters = int(max(1, min(n_clusters, n_distinct)))
        labels = KMeans(n_clusters=n_clusters, n_init=4, random_state=seed).fit_predict(reduced)
    rows = []
    names = {}
    for c in range(n_clusters):
        member = labels == c
        if not member.any():
            continue
        top = [t for t, _, _ in distinctive_terms(tfidf, terms, member, 5)]
        names[c] = f"{c + 1}: " + ", ".join(top[:3]) if top else f"{c + 1}"
        rows.append((c, names[c], int(member.sum()), ", ".join(top)))
    pts = pts.assign(x=xy[:, 0], y=xy[:, 1], cluster=labels)
    pts["cluster_label"] = pts["cluster"].map(names)
    clusters = pd.DataFrame(rows, columns=["cluster", "cluster_label", "rationales", "keywords"])
    return RationaleMap(pts, clusters, n_total, explained)
