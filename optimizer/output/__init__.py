"""Writers and formatters of a plan's result tables.

Modules
-------
``report``   Parquet report writer: result-table schema with units, manifest.
``summary``  the ten-second summary of a plan and its rich rendering.
"""
