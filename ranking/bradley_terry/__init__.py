"""Bradley–Terry: ``bradley_terry`` and everything it is built from.

- ``fit``: ``bradley_terry`` itself (its options, the dispatch to an input path);
- ``inputs``: the three input paths (P per context, one flat item set, flat with covariates);
- ``stacked``: the damped Newton solver of a stack of dense N x N problems in numpy (the
  contexts of P, the components of a flat item set), its Fisher errors;
- ``graph``: components, MLE existence, gauge and centring of a flat item set (numpy, scipy);
- ``flat``: flat fits (by component on ``stacked``; the compiled sparse Newton-CG for
  components of more than ``flat.STACK_MAX_ITEMS`` items);
- ``dense``, ``newton``: the compiled dense Newton (the budget loop's building blocks, and
  the twin the numpy solver is tested against) and the line search both kinds share;
- ``aggregate``, ``multinomial``: arena-scale flat fits (comparisons folded into cells) and
  their bootstrap, one compiled kernel that draws the multinomial counts and refits;
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
