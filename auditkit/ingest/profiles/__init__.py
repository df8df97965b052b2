"""Import profiles: a TOML file that maps a vendor's export onto auditkit's round model.

- :mod:`.model`: the profile, loaded and validated up front (:func:`load_profile`);
- :mod:`.notation`: card notations, times and money, converted column by column;
- :mod:`.mapping`: a source's rows to log-v1 round records, with a reason for every row it cannot map;
  :mod:`.template` fills its template fields;
- :mod:`.suggest` drafts a profile (``auditkit profile suggest``) from what :mod:`.sniff` reads in a
  sample of cells and what :mod:`.roles` makes of rows of several kinds;
- :mod:`.source` (raw source readers: CSV, xlsx, JSON, SQLite, PostgreSQL).

docs/profiles.md documents every key.
"""

from __future__ import annotations

from .model import Profile, load_profile, parse_profile

__all__ = ["Profile", "load_profile", "parse_profile"]
