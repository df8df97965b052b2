"""``auditkit simulate GAME --out LOG``: simulated rounds with injected faults and their ground truth."""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import (
    EXIT_CLEAN,
    UsageError,
    add_game,
    fraction,
    non_negative_int,
    positive,
    positive_int,
    prepare_outputs,
)


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("simulate", help="write simulated rounds with injected faults and their ground truth", **kw)
    add_game(s, "game", help="the game to simulate")
    s.add_argument("--rounds", type=positive_int, default=1000, help="number of rounds (at least 1)")
    s.add_argument("--out", help="JSONL file to write (.jsonl or .jsonl.gz); required unless --follow")
    s.add_argument("--truth", metavar="CSV",
                   help="write the (round_id, citation) of every injected fault here (when not given: not written)")
    s.add_argument("--fault-rate", type=fraction, default=0.0,
                   help="share of rounds with one injected fault, from 0 to 1")
    s.add_argument("--seed", type=non_negative_int, default=0,
                   help="random seed (an integer >= 0): the same seed writes the same log")
    s.add_argument("--follow", action="store_true", help="write per-table logs in real time (live demos)")
    s.add_argument("--rate", type=positive, default=200.0, help="with --follow: rounds per second in all")
    s.add_argument("--tables", type=positive_int, default=50, help="with --follow: number of table log files")
    s.add_argument("--out-dir", help="with --follow: folder of the table logs")
    s.add_argument("--seconds", type=positive, help="with --follow: stop after this long (when not given: at SIGINT)")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..progress import progress_bar
    from ..simulate import simulate_to_jsonl

    if args.follow:
        from ..simulate.follow import follow_command

        if not args.out_dir:
            raise UsageError("simulate --follow needs --out-dir")
        return follow_command(args)
    if not args.out:
        raise UsageError("simulate needs --out (or --follow with --out-dir)")
    prepare_outputs([args.out, args.truth])
    bar = progress_bar(args.rounds, f"simulate {args.game}", " rounds", not args.quiet)
    try:
        n, faults = simulate_to_jsonl(args.game, args.rounds, Path(args.out), Path(args.truth) if args.truth else None,
                                      seed=args.seed, fault_rate=args.fault_rate,
                                      progress=bar.update if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    print(f"{n} {args.game} round(s) written to {args.out}; {faults} injected fault(s)"
          + (f", ground truth in {args.truth}" if args.truth else ""))
    return EXIT_CLEAN
