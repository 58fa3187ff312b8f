"""The LP's generic machinery: builder, index letters, violations, grouping, joins, caches.

Nothing here knows what a family means; :mod:`optimizer.lp.dimensions` only names the
index letters.

Modules
-------
``builder``       the row and column builder (columns, rows, matrix and cost terms).
``dimensions``    the index letters, declared once with their full names.
``frames``        internal frames whose text keys stay NumPy object columns.
``grouping``      group sums and key lookups on integer codes (pandas' sums bit for bit).
``kahan``         Kahan group sums and running sums (pandas' additions, row by row).
``join``          merges of small frames on integer or text keys (pandas' merge, faster).
``reuse_cache``   index work cached per model structure (a sweep's patched models share it).
``tidy_numbers``  quantities at their bound written at the bound.
``violations``    violated rows of an independent check, one frame shape for all.
"""
