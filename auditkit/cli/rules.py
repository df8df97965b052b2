"""``auditkit rules``: the registered checks with their citations."""

from __future__ import annotations

import argparse

from .common import EXIT_CLEAN, add_game


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("rules", help="list the registered checks with their citations", **kw)
    add_game(s, "--game", help="only the checks of this game (when not given: all)")
    s.add_argument("--markdown", action="store_true", help="print a Markdown table (docs/rules.md)")
    s.add_argument("--config", help="show each check's settings as this licensee file sets them (default: the "
                                    "defaults)")
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..paytables import load_config
    from ..rules.registry import catalog_rows

    rows = catalog_rows(args.game, load_config(args.config))
    if args.markdown:
        print("| game | rule_id | citation | severity | check | settings (defaults) | needs |\n"
              "|---|---|---|---|---|---|---|")
        for r in rows:
            settings = "<br>".join(f"`{p}`" for p in r["params"].split("; ") if p)
            needs = ", ".join(f"`{k}`" for k in r["needs"].split(", ") if k)
            print(f"| {r['games']} | `{r['rule_id']}` | `{r['citation']}` | {r['severity']} | {r['summary']} | "
                  f"{settings} | {needs} |")
    else:
        for r in rows:
            print(f"{r['rule_id']:<28} {r['citation']:<24} {r['severity']:<7} {r['summary']}")
            if r["params"]:
                print(f"{'':<28} settings: {r['params']}")
            if r["needs"]:
                print(f"{'':<28} needs: {r['needs']}")
    return EXIT_CLEAN
