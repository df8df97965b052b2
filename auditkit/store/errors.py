"""The store's errors: locked past a timeout, damaged, or written by a newer auditkit."""

from __future__ import annotations


class StoreLocked(OSError):
    """Another process holds the store's lock past the timeout."""



class CorruptStore(OSError):
    """A store file that cannot be read (cut, overwritten): the message names it."""



class NewerStore(OSError):
    """A store (or a manifest entry) written by a newer auditkit, in a format this one does not read."""
