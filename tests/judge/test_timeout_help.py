"""The --timeout help says what a timeout below the server's reply time costs (issue 23,
item 12): each timed-out call is generated and billed again."""

from __future__ import annotations

from judge.cli.options import common_options


def test_timeout_help_warns_of_paying_twice():
    action = next(a for a in common_options()._actions if "--timeout" in a.option_strings)
    assert "bills" in action.help and "twice" in action.help
    assert "longest reply" in action.help
