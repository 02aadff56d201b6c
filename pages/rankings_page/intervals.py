"""Rankings page: how sure the systems ranking is (rank intervals, separability, which
system is significantly better than which). Lands with issue 14."""


def render(ds, attribute: str, judge: str, setting, result) -> None:
    """Draw the rank intervals of ``result`` (a ``SystemRanking``)."""
