"""The dataset an analysis page looks at: systems left out and a reading of the ratings."""

from __future__ import annotations

from collections.abc import Iterable

from data.schema import Dataset
from data.scope.readings import with_reading
from data.scope.systems import default_excluded, keep_systems


def analysis_view(
    ds: Dataset, exclude: Iterable[str] | None = None, reading: str | None = None
) -> Dataset:
    """``ds`` as the analyses see it: :func:`~data.scope.systems.keep_systems` then
    :func:`~data.scope.readings.with_reading`.

    Parameters
    ----------
    ds : Dataset
        The dataset as loaded; not changed.
    exclude : iterable of str, optional
        Systems to leave out; None: :func:`~data.scope.systems.default_excluded` (the reference
        systems, e.g. HANNA's human story); ``[]``: none.
    reading : {"published", "cleaned"}, optional
        None: ``"published"`` when :func:`~data.scope.readings.has_readings`, else the scores as
        loaded.

    Returns
    -------
    Dataset
        ``ds`` itself when nothing is left out and the reading changes no score (so caches
        keyed on the object stay valid).

    Raises
    ------
    DataError
        An unknown system or reading.
    """
    exclude = default_excluded(ds) if exclude is None else list(exclude)
    # "published" changes nothing where the readings agree (has_readings is False)
    return with_reading(keep_systems(ds, exclude), reading or "published")
