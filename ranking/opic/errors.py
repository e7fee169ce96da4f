"""The named errors of OPIC, under the package's :class:`~ranking.errors.RankingError`."""

from __future__ import annotations

from ranking.errors import RankingError


class OPICError(RankingError):
    """Base class of OPIC's errors."""


class UnknownPage(OPICError, KeyError):
    """A URL-Id that OPIC has not seen (negative or beyond the known pages)."""

    def __init__(self, url_id: int) -> None:
        super().__init__(url_id)
        self.url_id = url_id

    def __str__(self) -> str:
        return f"OPIC knows no page with URL-Id {self.url_id}"


class CorruptSnapshot(OPICError):
    """Bytes that are not an OPIC snapshot, or one from an incompatible version."""


class NoPages(OPICError):
    """The OPIC instance knows no page to select."""

    def __str__(self) -> str:
        return "OPIC knows no page yet: add seeds or report a fetch first"


class ForeignPage(OPICError, KeyError):
    """A URL-Id another part of a distributed OPIC owns (§4.1): its cash is not this part's."""

    def __init__(self, url_id: int, part: int, owner: int) -> None:
        super().__init__(url_id)
        self.url_id, self.part, self.owner = url_id, part, owner

    def __str__(self) -> str:
        return (
            f"URL-Id {self.url_id} belongs to OPIC part {self.owner}, not to part {self.part}: "
            "only its owner reads it or receives its cash"
        )


class BadTransfer(OPICError, ValueError):
    """A transfer between parts whose amount is negative or not finite: no cash moves (a
    worker's flush that meets one fails as any OPIC failure, and says which)."""

    def __init__(self, bad: int, url_id: int, amount: float) -> None:
        super().__init__(
            f"transfers carry finite, non-negative amounts ({bad} do not; "
            f"page {url_id}: {amount!r})"
        )
        self.bad, self.url_id, self.amount = bad, url_id, amount
