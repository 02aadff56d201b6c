"""Batch runs for large judge jobs (the OpenAI Batch API; vLLM's batch runner offline).

Write the calls of a run that the run store lacks as a batch JSONL (``custom_id`` = the
run-store key, ``body`` = the live request), submit it through the ``openai`` client or run
it elsewhere, poll its request counts, and import the output (and error) file into the run
store with the keys, reading and accounting of a live run. Prompts already answered, or asked
by an open batch, are never in a batch again; what a batch does not bring back stays pending.

- :mod:`~judge.batch.jobs`: :func:`write_batch`, :func:`submit_batch`, :func:`poll_batch`,
  :func:`collect_batch`, :func:`import_batch`, :func:`give_up_batch`, :func:`run_table`;
- :mod:`~judge.batch.reading`: output and error lines, problems named by file and line;
- :mod:`judge.store.batches`: the batch records in the run store;
- :mod:`judge.backends.openai_compat.batch_api`: request bodies and the endpoint's files and
  batches.

Command line: ``python -m judge batch write|submit|poll|import|list ...`` (:mod:`judge.cli.batch`).
"""

from judge.batch import jobs
from judge.batch.jobs import *  # noqa: F403 - every name of jobs.__all__

__all__ = list(jobs.__all__)
