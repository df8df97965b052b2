"""``auditkit review``: record auditors' reviews of findings in the store (carried forward by re-runs)."""

from __future__ import annotations

import argparse
import sys

from .common import DEFAULT_LOCK_TIMEOUT, EXIT_CLEAN, EXIT_FINDINGS, UsageError, add_lock_timeout


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    from ..reviews import STATUSES

    s = sub.add_parser("review", help="record reviews of findings (status and note) in the store (docs/reviews.md)",
                       **kw)
    actions = s.add_subparsers(dest="action", required=True, metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", required=True, help="the store whose findings are reviewed")
    add_lock_timeout(common, DEFAULT_LOCK_TIMEOUT)
    imp = actions.add_parser("import", parents=[common], help="take the status and note columns of a findings CSV "
                             "edited in a spreadsheet")
    imp.add_argument("file", help="a findings CSV (auditkit report --out) with status and note filled")
    imp.add_argument("--by", help="who reviewed (when not given: the user running the command)")
    one = actions.add_parser("set", parents=[common], help="review one finding")
    one.add_argument("round_id")
    one.add_argument("rule_id")
    one.add_argument("--status", required=True, choices=STATUSES)
    one.add_argument("--note", default="", help="why")
    one.add_argument("--by", help="who reviewed (when not given: the user running the command)")
    lst = actions.add_parser("list", parents=[common], help="the latest review of each finding reviewed")
    lst.add_argument("--status", action="append", choices=STATUSES, help="only these statuses (repeatable)")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """0 when every review was taken, 1 when some rows were not (each said on stderr)."""
    from ..report import csv_text
    from ..reviews import add_reviews, latest, read_review_csv
    from ..store import Store

    if not Store.is_store(args.store):
        raise UsageError(f"{args.store} is not a store (no _manifest or rounds folder)")
    store = Store(args.store)
    if args.action == "list":
        frame = latest(store)
        if args.status:
            frame = frame[frame["status"].isin(args.status)]
        csv_text(frame, sys.stdout)
        return EXIT_CLEAN
    if args.action == "set":
        reviews, problems = [{"round_id": args.round_id, "rule_id": args.rule_id, "status": args.status,
                              "note": args.note}], []
    else:
        try:
            reviews, problems = read_review_csv(args.file)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    with store.lock(args.lock_timeout, shared=True, command="review"):
        found = store.findings(None, None, None)
    known = set(zip(found["round_id"], found["rule_id"], strict=True))
    taken = [r for r in reviews if (r["round_id"], r["rule_id"]) in known]
    problems += [f"no finding {r['round_id']} {r['rule_id']} in the store: not taken" for r in reviews
                 if (r["round_id"], r["rule_id"]) not in known]
    n = add_reviews(store, taken, by=args.by, lock_timeout=args.lock_timeout)
    for p in problems:
        print(f"auditkit review: {p}", file=sys.stderr)
    print(f"{n} review(s) recorded" + (f", {len(problems)} row(s) not taken" if problems else ""))
    return EXIT_FINDINGS if problems else EXIT_CLEAN
