"""The LP's generic machinery: nothing here knows a chip, a site or a customer.

Modules
-------
``frames``        internal frames whose text keys stay NumPy object columns.
``grouping``      group sums and key lookups on integer codes (pandas' sums bit for bit).
``reuse_cache``   index work cached per model structure (a sweep's patched models share it).
``tidy_numbers``  quantities at their bound written at the bound.
"""
