"""How long rule bodies are: the distribution of lines per registered rule (issue 24's measure).

A rule's body is its function's source lines after the docstring, blank and comment lines left out.
Run by hand: ``python bench/rule_lengths.py [--all]`` prints the median, quartiles and the longest rules.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import statistics
import textwrap


def body_lines(func) -> int:
    """Lines of code in ``func``'s body, the docstring, blank lines and comments left out."""
    source = textwrap.dedent(inspect.getsource(func))
    node = ast.parse(source).body[0]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    if not body:
        return 0
    lines = source.splitlines()[body[0].lineno - 1:body[-1].end_lineno]
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="list every rule, not only the ten longest")
    args = parser.parse_args()
    from auditkit.rules.registry import _ordered

    sizes = sorted(((body_lines(r.func), r.rule_id) for r in _ordered()), reverse=True)
    n = [s for s, _ in sizes]
    q1, median, q3 = statistics.quantiles(n, n=4)
    print(f"{len(n)} rules: median {statistics.median(n):g} lines, quartiles {q1:g}-{q3:g}, "
          f"max {max(n)}, over 12 lines: {sum(s > 12 for s in n)}")
    for size, rule_id in sizes if args.all else sizes[:10]:
        print(f"  {size:4d}  {rule_id}")


if __name__ == "__main__":
    main()
