"""Bradley–Terry: ``bradley_terry`` and everything it is built from.

- ``fit``: ``bradley_terry`` itself (its options, the dispatch to an input path);
- ``inputs``: the three input paths (P per context, one flat item set, flat with covariates);
- ``dense``, ``flat``, ``newton``: the damped Newton solvers (one N x N Hessian per context;
  one large item set by sparse inexact Newton) and what they share;
- ``aggregate``, ``multinomial``: arena-scale flat fits (comparisons folded into cells) and
  the compiled multinomial draws of their bootstrap;
- ``intervals``: Fisher and bootstrap intervals; ``result``: ``BTResult``;
- ``ties``, ``ties_model``: the Davidson and Rao–Kupper tie models (``tie_model_fit``);
- ``features``, ``features_solve``: covariates (the Chatbot Arena style control);
  ``style``: ``controlled_win_rates`` against a baseline from such a fit.

``ranking.bradley_terry`` is the function (``from ranking import bradley_terry``); reach this
package's modules with ``from ranking.bradley_terry.<module> import ...``.
"""

from .fit import MAX_FISHER_ITEMS, RIDGE_FALLBACK, bradley_terry
from .result import BTResult
from .style import controlled_win_rates
from .ties_model import (
    DAVIDSON,
    MODELS,
    RAO_KUPPER,
    TieModelFit,
    pair_probabilities,
    tie_model_fit,
)

__all__ = [
    "BTResult",
    "DAVIDSON",
    "MAX_FISHER_ITEMS",
    "MODELS",
    "RAO_KUPPER",
    "RIDGE_FALLBACK",
    "TieModelFit",
    "bradley_terry",
    "controlled_win_rates",
    "pair_probabilities",
    "tie_model_fit",
]
