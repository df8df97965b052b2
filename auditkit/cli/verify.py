"""``auditkit verify STORE``: an auditor's evidence check of a store against its manifest."""

from __future__ import annotations

import argparse
import json

from .common import DEFAULT_LOCK_TIMEOUT, EXIT_CLEAN, EXIT_FINDINGS, UsageError, add_lock_timeout


def add_parser(sub: argparse._SubParsersAction, **kw) -> None:
    s = sub.add_parser("verify", help="check a store's parts, index and sources against its manifest "
                       "(exit 0: all agree, 1: something disagrees)", **kw)
    s.add_argument("store", help="store folder or s3:// URI")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    add_lock_timeout(s, DEFAULT_LOCK_TIMEOUT)
    s.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..store import Store
    from ..verify import verify

    if not Store.is_store(args.store):
        raise UsageError(f"{args.store} is not a store (no _manifest or rounds folder)")
    store = Store(args.store)
    with store.lock(timeout=args.lock_timeout, shared=True, command="verify"):
        result = verify(store)
    print(json.dumps(result.as_dict(), indent=1) if args.json else result.summary())
    return EXIT_CLEAN if result.ok else EXIT_FINDINGS
