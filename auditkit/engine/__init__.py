"""The validation engine, in Arrow: what a run checks (:mod:`.plan`), the rules over rounds and shoes
(:mod:`.checks`), the findings table they make (:mod:`.findings`), partitions read in batches with the
shoes that cross midnight (:mod:`.partitions`), and the three executors of a plan (:mod:`.executors`:
one process, a process pool, a Dask cluster) that give the same findings.

The pandas API (findings as frames, for the command line, notebooks and tests) is
:mod:`auditkit.validate`, which converts at the end.
"""
