"""Writers and formatters of a plan's result tables.

Modules
-------
``table_schema``    result-table schema: every column's Arrow type, unit and meaning.
``atomic``          atomic file writes (temporary name, fsync, rename), the report's error.
``flush``           flushing a folder of new files to disk: one syncfs on a local file system.
``run_folder``      run IDs, the exclusive claim of a run folder, scenario partitions.
``manifest``        the run manifest: read, merged under a lock, completeness of a scenario.
``parquet_tables``  Arrow schemas of the result tables, Parquet table writer and reader.
``units``           units of the result tables: file metadata and the units.csv dictionary.
``inputs_record``   the solved inputs of a scenario: inputs.yaml and its manifest fields.
``report``          Parquet report writer: a plan result as its tables plus the manifest.
``formatting``      compact number formats: USD, quantities, energy, water, MW.
``progress``        one progress report for long commands: count, current item, times.
``summary_frames``  the summary's section frames computed from the result tables.
``binding_limits``  binding limits in domain words, and the notes on missing or odd duals.
``summary``         the ten-second summary of a plan: PlanSummary and summarize.
``summary_text``    the summary in words: commitments, clusters, calibration, cash lines.
``summary_render``  rich rendering of the summary (what ``capacity solve`` prints).
"""
