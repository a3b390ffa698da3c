"""How many of a run's answers could be read, and what its headline then rests on (issue #55).

Every benchmark's ``summary`` (the line ``evaluate`` and ``score`` print) and ``compare``'s tables put the counts
beside the means (``read_counts``), and add a ``warning:`` line (``unreadable_warning``) when some answers could not
be read: a mean over 1 of 20 answers must not read like a mean over 20. What counts as unreadable is the benchmark's
parser's verdict (its metrics' parse statuses); what an unreadable answer then becomes (left out, read as Neither,
scored neutral) is the benchmark's rule, which the warning names."""

from __future__ import annotations

from culturebench.evaluate.runs.limit import counted


def read_counts(read: int, unreadable: int) -> str:
    """``19 read, 1 unreadable``: the counts printed beside a mean."""
    return f"{read:,} read, {unreadable:,} unreadable"


def unreadable_warning(who: str, unreadable: int, total: int, rests_on: str) -> list[str]:
    """The ``warning:`` line of ``who`` (a benchmark and the part of its run) when ``unreadable`` of its ``total`` answers could not
    be read, saying what the headline ``rests_on`` then; none when every answer was read."""
    if unreadable <= 0 or total <= 0:
        return []
    return [f"warning: {who}: {unreadable:,} of {counted(total, 'answers')} unreadable ({unreadable / total:.0%}); "
            f"{rests_on}"]


def status_counts(parse_status: dict, readable: tuple[str, ...]) -> tuple[int, int]:
    """(read, unreadable) of a metrics ``parse_status`` mapping (status -> count): the ``readable`` statuses are
    read, every other one unreadable."""
    read = sum(int(n or 0) for status, n in parse_status.items() if status in readable)
    return read, sum(int(n or 0) for n in parse_status.values()) - read
