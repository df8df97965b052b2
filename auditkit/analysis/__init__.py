"""The auditors' analysis API: findings and rounds out of a store, summaries, drill-down,
expected versus observed outcome frequencies, and hold.

Everything here aggregates in pandas before anything is charted, and reads the
store one partition (game and gaming day) at a time with only the columns it
needs, so a notebook over ten million rounds holds summaries, never rounds.

Definitions used throughout:

* **day** is the gaming day of the store's partition (the local date of
  ``started_at``); **hour** is the local hour the log wrote.
* **shift** is named by local hour ranges, ``{"day": (6, 14), "swing": (14, 22),
  "grave": (22, 6)}`` by default (start inclusive, end exclusive, wrapping
  midnight); pass your own mapping to any function taking ``shifts``.
* **overpaid** is the sum of positive discrepancies (recorded net above the
  expected net: the patron got too much), **underpaid** the sum of the negative
  ones, as a positive amount.
* **drop** here is the *handle*: the sum of stakes of completed rounds (blackjack
  doubles and splits counted at their total wager; three card poker ante + play
  + pair plus). **win** is the house's net win, ``-sum(patron nets)``
  (three card poker's ante bonus included), and **hold = win / drop**. Cash
  drop (the drop box) is not in a hand-history log; this is the closest figure
  a log supports. Void and dead rounds (every wager returned) are left out.

The API is one name, ``auditkit.analysis`` (``A`` in the notebooks); its functions live in modules
named after what they hold: :mod:`.shifts`, :mod:`.rounds`, :mod:`.findings`, :mod:`.outcomes`,
:mod:`.hold`.
"""

from __future__ import annotations

from ..tables import readable
from .findings import (
                       MIN_ROUNDS,
                       busy,
                       by_citation,
                       by_day,
                       by_dealer,
                       by_dealer_shift,
                       by_shift,
                       by_table,
                       coverage,
                       cumulative_payouts,
                       discrepancy_bins,
                       drill_down,
                       heatmap_frame,
                       largest_discrepancies,
                       load_findings,
                       money_findings,
                       over_time,
                       overview,
                       payout_totals,
                       period_of,
                       summarize,
                       with_rates,
)
from .hold import hold
from .outcomes import expected_vs_observed, flagged_groups, funnel_limits, outcome_counts
from .rounds import iter_rounds, load_rounds, open_store, round_counts, rounds_behind
from .shifts import DEFAULT_SHIFTS, shift_of

__all__ = [
    "DEFAULT_SHIFTS", "open_store", "shift_of", "load_findings", "coverage", "iter_rounds", "load_rounds", "round_counts",
    "summarize", "by_citation", "by_table", "by_dealer", "by_shift", "by_day", "payout_totals",
    "money_findings", "discrepancy_bins", "largest_discrepancies", "cumulative_payouts", "heatmap_frame", "over_time",
    "with_rates", "readable", "overview", "MIN_ROUNDS", "busy", "period_of", "by_dealer_shift",
    "drill_down", "rounds_behind", "outcome_counts",
    "expected_vs_observed", "flagged_groups", "funnel_limits", "hold",
]
