"""The columns of the canonical ratings and comparisons tables, in their order, as the tests
build them and expect them back (a run's export adds ``raw`` at the end)."""

RATING_COLUMNS = "context_id candidate_id attribute judge prompt_id sample score".split()

COMPARISON_COLUMNS = "context_id attribute judge first_id second_id p_first verdict sample".split()
