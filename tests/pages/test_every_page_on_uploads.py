"""Every page on the judgments people actually have (issue 22, Done when): an Arena-Hard-style
upload (graded verdicts, one baseline, both games, self-comparison rows, instruction-long
question ids with Markdown and a code fence) and an LLMBar-style upload (instruction, both
outputs, a gold label, a judge's verdicts in LLMBar's words, each pair in both orders), each
read through the Data page's reader (``data.io.read_upload_result``), then every page app.py
routes to opened with it active: no exception, no error element; what a page cannot do on
the file it says (an info or a caption), never a crash."""

from __future__ import annotations

import pytest

from data.io import read_upload_result
from data.schema import Dataset
from tests._routes import page_scripts
from tests.data.test_io_pairwise_tables import llmbar_like
from tests.pages import test_arena_baseline as arena
from tests.pages._analysis_apptest import open_page


def _arena() -> Dataset:
    return arena._upload().dataset


def _llmbar() -> Dataset:
    frame = llmbar_like()
    return read_upload_result("llmbar.csv", frame.to_csv(index=False).encode()).dataset


UPLOADS = {"arena-hard": _arena, "llmbar": _llmbar}


@pytest.fixture(scope="module", params=sorted(UPLOADS))
def upload(request) -> Dataset:
    return UPLOADS[request.param]()


def test_the_uploads_are_what_they_claim(upload):
    c = upload.comparisons
    if "gpt-4" in set(c["judge"]):  # LLMBar-style
        assert (upload.candidates["text"] != "").all() and len(upload.contexts) == 3
        assert "human:gold" in set(c["judge"])
    else:  # Arena-Hard-style: graded, weighted, the self-comparisons skipped
        assert c["grade"].abs().max() == 2 and (c["weight"] == 3).any()
        assert not (c["first_id"] == c["second_id"]).any()
        assert len(upload.context_ids()) == arena.N_Q


@pytest.mark.parametrize("page", page_scripts())
def test_every_page_opens_on_the_upload(upload, page):
    at = open_page(page, upload)
    assert not at.exception, (page, [e.value for e in at.exception])
    assert not at.error, (page, [e.value for e in at.error])
    shown = len(at.markdown) + len(at.caption) + len(at.info) + len(at.get("plotly_chart"))
    assert shown > 0, f"{page} shows nothing on the upload"
