"""Folder walks that cannot loop: the one walk under an input folder and a job's globs.

A folder is entered once, known by its device and inode (a symbolic link back to
it, a second way in or a bind mount cannot make it walked again); a link to a
folder is entered only with ``follow_symlinks``, and a link that leads back to a
folder being walked (``ln -s . loop``, ``ln -s .. up``) is reported once as a loop,
followed or not. Hidden names (``.x``) are skipped. Folders are walked in name
order, so what is found and reported is the same on every run.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from fnmatch import fnmatchcase
from pathlib import Path

__all__ = ["walk", "glob_matches"]


def walk(root: Path, follow_symlinks: bool, skipped: list[tuple[str, str]],
         enter: Callable[[Path], bool] | None = None) -> Iterator[tuple[Path, bool]]:
    """Every entry under the folder ``root`` as (path, is a folder), hidden names skipped, each folder's
    entries after it; a folder is entered when ``enter(path)`` says so (None: every one). A symbolic link
    loop is appended to ``skipped`` once, as (link, reason)."""
    try:
        st = os.stat(root)
    except OSError:
        return
    entered = {(st.st_dev, st.st_ino)}
    # each folder being walked, from root down, with the entries left to yield (a loop leads back to one of them)
    stack: list[tuple[tuple[int, int], Iterator[os.DirEntry[str]]]] = [((st.st_dev, st.st_ino), _listing(root))]
    while stack:
        e = next(stack[-1][1], None)
        if e is None:
            stack.pop()
            continue
        path = Path(e.path)
        try:
            is_dir = e.is_dir()  # follows a link
        except OSError:
            is_dir = False
        yield path, is_dir
        if not is_dir or (enter is not None and not enter(path)):
            continue
        try:
            st = os.stat(path)
        except OSError:
            continue
        key, link = (st.st_dev, st.st_ino), e.is_symlink()
        if any(key == k for k, _ in stack):
            what = "a symbolic link loop" if link else "a folder loop (a bind mount?)"
            skipped.append((str(path), f"{what} back to {os.path.realpath(path)}; not walked again"))
        elif not (link and not follow_symlinks) and key not in entered:
            entered.add(key)
            stack.append((key, _listing(path)))


def _listing(folder: Path) -> Iterator[os.DirEntry[str]]:
    """A folder's entries in name order, hidden names skipped; none when it cannot be read."""
    try:
        with os.scandir(folder) as it:
            items = sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:
        items = []
    return iter(items)


def _match(parts: tuple[str, ...], pats: tuple[str, ...], prefix: bool) -> bool:
    """Whether ``parts`` match the glob segments ``pats`` (``**``: any number of folders); with ``prefix``,
    whether they may begin a match (a folder worth entering)."""
    if not pats:
        return not parts
    if not parts:
        return prefix or all(p == "**" for p in pats)
    if pats[0] == "**":
        return _match(parts, pats[1:], prefix) or _match(parts[1:], pats, prefix)
    return fnmatchcase(parts[0], pats[0]) and _match(parts[1:], pats[1:], prefix)


def glob_matches(root: Path, pattern: tuple[str, ...], follow_symlinks: bool,
                 skipped: list[tuple[str, str]]) -> list[Path]:
    """The files and folders under ``root`` whose path below it matches the glob segments ``pattern``
    (``*``, ``?``, ``[...]`` within a name, ``**`` across folders; hidden names are matched by no
    pattern), sorted. Only folders that may lead to a match are entered (:func:`walk`'s rules)."""
    def may_match(folder: Path) -> bool:
        return _match(folder.relative_to(root).parts, pattern, True)

    found = [root] if root.is_dir() and _match((), pattern, False) else []  # ``**`` is also the folder itself
    found += (p for p, _is_dir in walk(root, follow_symlinks, skipped, may_match)
              if _match(p.relative_to(root).parts, pattern, False))
    return sorted(found)
