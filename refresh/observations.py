"""Access histories as padded numpy arrays, and the Last-Modified reliability checks (§6.1).

The estimators work on many pages at once, so a batch of histories is packed into (pages ×
accesses) arrays padded with NaN / -1. :meth:`ObservationBatch.from_observations` takes what
``Metadata.observations`` returns (lists of records with the fields of :class:`Observation`:
the store's ``metadata.types.Observation`` is one); library users may build the arrays
directly.

A server's Last-Modified is only used when it looks trustworthy (§6.1 "unless Xyleme detects
that the web server provides an unreliable last date of change"). The rules, per page:

* MISSING: some access came without a Last-Modified;
* FUTURE: a Last-Modified later than the access itself (beyond the clock-skew tolerance);
* ALWAYS_NOW: on every access (at least two) the Last-Modified equals the fetch time, i.e. the
  server stamps "now" on whatever it sends;
* NOT_MONOTONE: the Last-Modified went backwards;
* DISAGREES_MD5: in more than ``max_lm_disagreement`` of the access intervals the Last-Modified
  moved while the MD5 did not, or the reverse.

and per host: when more than ``host_unreliable_share`` of a host's checked pages are
unreliable, every page of the host is (one lying server configuration spoils them all, also
the pages not yet caught).
"""

from __future__ import annotations

import enum
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

UNKNOWN_CHANGE = -1


class Observation(Protocol):
    """One access to a page as the estimators read it (§6.1): when, whether the body changed
    since the access before (None for the first), and the server's Last-Modified if sent."""

    @property
    def at(self) -> float: ...

    @property
    def changed(self) -> bool | None: ...

    @property
    def last_modified(self) -> float | None: ...


class LastModifiedVerdict(enum.IntEnum):
    """Why a page's Last-Modified is (not) trusted; 0 means it is."""

    RELIABLE = 0
    MISSING = 1
    FUTURE = 2
    ALWAYS_NOW = 3
    NOT_MONOTONE = 4
    DISAGREES_MD5 = 5
    HOST_UNRELIABLE = 6


@dataclass(frozen=True)
class AccessIntervals:
    """The access intervals [t_{i−1}, t_i] of a batch of pages, one row per page.

    ``length`` holds t_i − t_{i−1}; ``changed`` whether the MD5 changed in the interval;
    ``valid`` which cells are real intervals (padding and intervals whose outcome is unknown
    are False). Every array has shape (pages, max_accesses − 1).
    """

    length: np.ndarray
    changed: np.ndarray
    valid: np.ndarray

    @classmethod
    def from_arrays(
        cls, length: np.ndarray, changed: np.ndarray, valid: np.ndarray | None = None
    ) -> AccessIntervals:
        """Intervals from plain arrays (2-D, or 1-D for a single page)."""
        length = np.atleast_2d(np.asarray(length, dtype=np.float64))
        changed = np.atleast_2d(np.asarray(changed, dtype=bool))
        valid = (
            np.isfinite(length) & (length > 0)
            if valid is None
            else np.atleast_2d(np.asarray(valid, dtype=bool))
        )
        if not length.shape == changed.shape == valid.shape:
            raise ValueError(
                f"length, changed and valid must have one shape, got "
                f"{length.shape}, {changed.shape}, {valid.shape}"
            )
        if np.any(valid & ~(length > 0)):
            raise ValueError("every valid access interval must have a positive length")
        return cls(np.where(valid, length, 0.0), changed & valid, valid)


def increasing_observations(history: Mapping[str, np.ndarray]) -> Mapping[str, np.ndarray]:
    """The observation history without the accesses that are not later than the one before.

    The estimators need strictly increasing access times per page. Two fetches of one page
    can commit out of order (two workers, the later response first) or at the same simulated
    time (a frozen or manual clock); such an access says nothing new, and keeping it would
    make every refresh pass fail. Returns ``history`` itself when all is in order.
    :meth:`ObservationBatch.from_history` applies it, so every reader of the stored history
    (the daemon's refresh pass, ``xyleme schedule``, the dashboard) sees the same accesses.
    """
    offsets, at = history["offsets"], history["at"]
    later = np.ones(at.size, dtype=bool)
    later[1:] = at[1:] > at[:-1]
    later[offsets[:-1][np.diff(offsets) > 0]] = True  # a page's first access always counts
    if later.all():
        return history
    keep = np.ones(at.size, dtype=bool)
    for page in np.unique(np.searchsorted(offsets, np.flatnonzero(~later), side="right") - 1):
        times = at[offsets[page] : offsets[page + 1]]
        keep[offsets[page] + 1 : offsets[page + 1]] = times[1:] > np.maximum.accumulate(times)[:-1]
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    return {
        **{name: history[name][keep] for name in ("at", "changed", "last_modified")},
        **({"id": history["id"]} if "id" in history else {}),
        "offsets": kept_before[offsets].astype(offsets.dtype),
    }


@dataclass(frozen=True)
class ObservationBatch:
    """Access histories of many pages as (pages × accesses) arrays, oldest access first.

    ``at`` is the access time (NaN padding), ``changed`` 1 / 0 / −1 for changed / unchanged /
    unknown (the first access and padding), ``last_modified`` the server's date (NaN when
    missing), ``count`` the number of accesses of each page.
    """

    at: np.ndarray
    changed: np.ndarray
    last_modified: np.ndarray
    count: np.ndarray

    @classmethod
    def from_observations(cls, histories: Sequence[Sequence[Observation]]) -> ObservationBatch:
        """Pack ``Metadata.observations`` lists (one per page) into padded arrays.

        Examples
        --------
        >>> from collections import namedtuple
        >>> O = namedtuple("O", "at changed last_modified", defaults=[None])
        >>> batch = ObservationBatch.from_observations([[O(0, None), O(10, True)], [O(5, None)]])
        >>> batch.count.tolist(), batch.changed.tolist()
        ([2, 1], [[-1, 1], [-1, -1]])
        """
        histories = [_in_time_order(history) for history in histories]
        count = np.fromiter((len(h) for h in histories), dtype=np.int64, count=len(histories))
        width = max(int(count.max(initial=0)), 1)
        flat = list(itertools.chain.from_iterable(histories))
        rows = np.repeat(np.arange(len(histories)), count)
        cols = np.arange(len(flat)) - np.repeat(np.cumsum(count) - count, count)
        shape = (len(histories), width)
        at = np.full(shape, np.nan)
        changed = np.full(shape, UNKNOWN_CHANGE, dtype=np.int8)
        last_modified = np.full(shape, np.nan)
        at[rows, cols] = np.fromiter((o.at for o in flat), dtype=np.float64, count=len(flat))
        changed[rows, cols] = np.fromiter(
            (UNKNOWN_CHANGE if o.changed is None else int(o.changed) for o in flat),
            dtype=np.int8,
            count=len(flat),
        )
        last_modified[rows, cols] = np.fromiter(
            (np.nan if o.last_modified is None else o.last_modified for o in flat),
            dtype=np.float64,
            count=len(flat),
        )
        return cls(at, changed, last_modified, count)

    @classmethod
    def from_history(cls, history: Mapping[str, np.ndarray]) -> ObservationBatch:
        """Pack ``Metadata.observation_history()`` (all pages, CSR rows) without a page loop.

        ``history`` holds ``offsets`` (page k's rows are offsets[k]:offsets[k + 1]) and the row
        columns ``at``, ``changed`` (1.0 / 0.0 / NaN for a first access) and
        ``last_modified`` (NaN when missing). Rows of a page are oldest first; an access not
        later than the one before is dropped (:func:`increasing_observations`).

        Examples
        --------
        >>> nan = float("nan")
        >>> batch = ObservationBatch.from_history({
        ...     "offsets": np.array([0, 2, 3]), "at": np.array([0.0, 5.0, 1.0]),
        ...     "changed": np.array([nan, 1.0, nan]), "last_modified": np.full(3, nan)})
        >>> batch.count.tolist(), batch.changed.tolist()
        ([2, 1], [[-1, 1], [-1, -1]])
        """
        history = increasing_observations(history)
        offsets = np.asarray(history["offsets"], dtype=np.int64)
        count = np.diff(offsets)
        width = max(int(count.max(initial=0)), 1)
        rows = np.repeat(np.arange(len(count)), count)
        cols = np.arange(offsets[-1] - offsets[0]) - np.repeat(offsets[:-1] - offsets[0], count)
        shape = (len(count), width)
        at = np.full(shape, np.nan)
        changed = np.full(shape, UNKNOWN_CHANGE, dtype=np.int8)
        last_modified = np.full(shape, np.nan)
        flag = np.asarray(history["changed"], dtype=np.float64)
        at[rows, cols] = history["at"]
        changed[rows, cols] = np.where(np.isnan(flag), UNKNOWN_CHANGE, flag).astype(np.int8)
        last_modified[rows, cols] = history["last_modified"]
        return cls(at, changed, last_modified, count)

    @property
    def accessed(self) -> np.ndarray:
        """Mask of the real (non-padding) accesses, shape (pages, max_accesses)."""
        return np.arange(self.at.shape[1]) < self.count[:, None]

    def intervals(self) -> AccessIntervals:
        """The access intervals with a known outcome (changed or not) of every page."""
        length = np.diff(self.at, axis=1)
        outcome = self.changed[:, 1:]
        valid = self.accessed[:, 1:] & (outcome != UNKNOWN_CHANGE)
        return AccessIntervals(np.where(valid, length, 0.0), (outcome == 1) & valid, valid)

    def last_change_ages(self) -> tuple[np.ndarray, np.ndarray]:
        """Per access, whether the Last-Modified moved since the previous access, and t − d.

        Returns ``(moved, age)``: ``moved`` (pages × accesses) is True at the first access
        (footnote 5 of §6.1: it counts as a change interval) and where d_i > d_{i−1};
        ``age`` is l_i = t_i − d_i clipped to the access interval (so clock skew never gives a
        negative or over-long age).
        """
        lm = self.last_modified
        moved = np.zeros(lm.shape, dtype=bool)
        moved[:, 0] = self.count > 0
        moved[:, 1:] = lm[:, 1:] > lm[:, :-1]
        lower = np.zeros(lm.shape)
        upper = np.full(lm.shape, np.inf)
        upper[:, 1:] = np.diff(self.at, axis=1)
        age = np.clip(self.at - lm, lower, upper)
        valid = self.accessed & np.isfinite(lm)
        return moved & valid, np.where(valid, age, 0.0)


def last_modified_verdicts(
    batch: ObservationBatch, *, clock_skew_s: float = 60.0, max_disagreement: float = 0.1
) -> np.ndarray:
    """Judge each page's Last-Modified (§6.1): an int8 array of :class:`LastModifiedVerdict`.

    Parameters
    ----------
    batch
        The pages' access histories.
    clock_skew_s
        Tolerance when comparing the server's dates with our access times.
    max_disagreement
        Largest tolerated fraction of intervals where Last-Modified and MD5 disagree.

    Returns
    -------
    numpy.ndarray
        One verdict per page; the first rule that fires wins, in the order of the enum.

    Notes
    -----
    Vectorised over the padded arrays: every rule is a reduction along the access axis.
    """
    accessed = batch.accessed
    lm, at = batch.last_modified, batch.at
    verdict = np.zeros(len(batch.count), dtype=np.int8)

    def mark(rule: np.ndarray, reason: LastModifiedVerdict) -> None:
        verdict[(verdict == 0) & rule] = reason

    mark(np.any(accessed & np.isnan(lm), axis=1), LastModifiedVerdict.MISSING)
    with np.errstate(invalid="ignore"):
        mark(np.any(accessed & (lm > at + clock_skew_s), axis=1), LastModifiedVerdict.FUTURE)
        stamps_now = np.all(~accessed | (np.abs(at - lm) <= clock_skew_s), axis=1)
        mark(stamps_now & (batch.count >= 2), LastModifiedVerdict.ALWAYS_NOW)
        both = accessed[:, 1:]
        went_back = both & (lm[:, 1:] < lm[:, :-1] - clock_skew_s)
        mark(np.any(went_back, axis=1), LastModifiedVerdict.NOT_MONOTONE)
        known = both & (batch.changed[:, 1:] != UNKNOWN_CHANGE)
        lm_moved = lm[:, 1:] > lm[:, :-1]
        disagree = known & (lm_moved != (batch.changed[:, 1:] == 1))
        n_known = known.sum(axis=1)
        share = disagree.sum(axis=1) / np.maximum(n_known, 1)
    mark((n_known > 0) & (share > max_disagreement), LastModifiedVerdict.DISAGREES_MD5)
    return verdict


def spread_host_verdicts(
    verdicts: np.ndarray, host_ids: np.ndarray, *, unreliable_share: float = 0.5
) -> np.ndarray:
    """Mark every page of a host unreliable when too many of its pages are (§6.1).

    Parameters
    ----------
    verdicts
        Per-page :class:`LastModifiedVerdict` codes, as :func:`last_modified_verdicts` gives.
    host_ids
        An integer host key per page (any hashing of the host name).
    unreliable_share
        A host is unreliable when more than this share of its pages is.

    Returns
    -------
    numpy.ndarray
        The verdicts, with HOST_UNRELIABLE on the reliable pages of unreliable hosts.
    """
    hosts, inverse = np.unique(np.asarray(host_ids), return_inverse=True)
    bad = np.bincount(inverse, weights=verdicts != 0, minlength=len(hosts))
    total = np.bincount(inverse, minlength=len(hosts))
    host_bad = bad / total > unreliable_share
    out = verdicts.astype(np.int8, copy=True)
    out[(out == 0) & host_bad[inverse]] = LastModifiedVerdict.HOST_UNRELIABLE
    return out


def _in_time_order(history: Sequence[Observation]) -> list[Observation]:
    """``history`` without the accesses not later than the one before (as
    :func:`increasing_observations` does for the stored arrays)."""
    kept: list[Observation] = []
    for observation in history:
        if not kept or observation.at > kept[-1].at:
            kept.append(observation)
    return kept
