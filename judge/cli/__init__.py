"""Command line: ``python -m judge run ...``, ``estimate ...`` and ``batch ...`` (batch runs:
:mod:`judge.cli.batch`).

Examples::

    python -m judge estimate --benchmark summeval --attribute coherence --template liusie-c2 \\
        --model gpt-4o-mini --selection no-repeat --budget 40
    python -m judge run --benchmark summeval --attribute coherence --template liusie-c2 \\
        --backend openai --model gpt-4o-mini --selection no-repeat --budget 40 --samples 5 \\
        --out comparisons.csv
    python -m judge run --dataset my_data/ --attribute fluency --template liusie-c1 \\
        --backend hf --model google/flan-t5-large --out comparisons.parquet

The options are those of the app's run page. Answers go to the run store (``--store``,
default ``$JUDGESCOPE_CACHE/runs.sqlite``), so an interrupted run resumes where it stopped
when the same command is given again. A request that fails (after the backend's retries) does
not stop the run: it is counted in the summary, kept in the store with its reason and asked
again by the next run. Two runs on one store share the work: calls one of them is making are
waited for, never asked twice. Ctrl-C or SIGTERM stop sending, store the answers in flight
and exit with code 130. Bad input (unknown template, a field the data cannot
fill, an endpoint that does not answer, an unknown model) is one line on stderr and exit
code 2, before any model call. The API key is read from ``OPENAI_API_KEY`` (or Streamlit
secrets), never from the command line.

Modules: ``main`` (the parser, ``run``, ``estimate``, :func:`main`), ``options`` (the options
``run``, ``estimate`` and ``batch write|submit`` share, turned into a dataset, template and
backend) and ``batch`` (``python -m judge batch ...``).
"""

from judge.cli.main import main

__all__ = ["main"]
