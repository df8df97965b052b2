"""Hold: the house's win over the handle, per group of stored rounds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import games as registered
from ..columns import flat_values, parents, to_numpy
from .rounds import StoreLike, _as_list, iter_rounds, open_store


def _stakes_and_nets(t: pa.Table, game: str) -> tuple[np.ndarray, np.ndarray]:
    """Per round: sum of stakes and sum of patron nets (the wagers list, and the game's hands)."""
    n = t.num_rows
    stake = np.zeros(n)
    net = np.zeros(n)

    def add(values: pa.Array, owner: np.ndarray, into: np.ndarray) -> None:
        into += np.bincount(owner, weights=to_numpy(values, 0.0).astype(np.float64), minlength=n)

    w = flat_values(t["wagers"])
    owner = parents(t["wagers"])
    add(w.field("amount"), owner, stake)
    add(w.field("net"), owner, net)
    theory = registered.get(game).theory
    for col in theory.STAKE_COLUMNS if theory else ():
        owner = parents(t[col])
        stakes, nets = theory.stakes_and_nets(flat_values(t[col]))
        for f in stakes:
            add(f, owner, stake)
        for f in nets:
            add(f, owner, net)
    return stake, net


def hold(store: StoreLike, start: str | None = None, end: str | None = None, *,
         games: str | Iterable[str] | None = None, tables: str | Iterable[str] | None = None,
         dealers: str | Iterable[str] | None = None, by: Sequence[str] = ("game", "table_id", "date")) -> pd.DataFrame:
    """Drop (sum of stakes), win (``-sum of patron nets``) and hold = win / drop per group.

    Completed rounds only (void and dead rounds return every wager). ``by``
    among game, table_id, dealer_id, date.
    """
    st = open_store(store)
    keys = list(by)
    frames = []
    for game in _as_list(games) or st.games():
        theory = registered.get(game).theory
        cols = ["table_id", "dealer_id", "status", "wagers", *(theory.STAKE_COLUMNS if theory else [])]
        for date, t in iter_rounds(st, game, start, end, tables=tables, dealers=dealers, columns=cols):
            completed = to_numpy(pc.equal(t["status"], "completed"), False).astype(bool)
            stake, net = _stakes_and_nets(t, game)
            f = pd.DataFrame({"table_id": t["table_id"].to_numpy(zero_copy_only=False),
                              "dealer_id": t["dealer_id"].to_numpy(zero_copy_only=False),
                              "drop": stake, "win": -net})[completed]
            f["game"], f["date"] = game, date
            frames.append(f.groupby(keys, dropna=False).agg(
                rounds=("drop", "size"), drop=("drop", "sum"), win=("win", "sum")).reset_index())
    if not frames:
        return pd.DataFrame(columns=keys + ["rounds", "drop", "win", "hold"])
    out = pd.concat(frames).groupby(keys, dropna=False)[["rounds", "drop", "win"]].sum().reset_index()
    out[["drop", "win"]] = out[["drop", "win"]].round(2)
    out["hold"] = np.where(out["drop"] > 0, out["win"] / out["drop"].where(out["drop"] > 0, 1), np.nan)
    return out
