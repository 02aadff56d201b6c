"""Rankings page: tie models (Davidson, Rao–Kupper) beside "a tie is half a win". Lands with
issue 14."""


def render(ds, attribute: str, judge: str, setting) -> None:
    """Draw the tie-model comparison for one judge of ``attribute``."""
