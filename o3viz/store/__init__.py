"""The persistent trace store: trace files named by their content key plus an SQLite index.

``store`` keeps the files and the index in step (``files`` the folder of trace files, ``schema``
the database, its upgrades and transactions, ``errors`` the one-line ``StoreError``s); ``index``
what one row knows about a trace; ``query`` the questions the Library, the Dataset page and
``o3viz library`` ask; ``repair`` rebuilding the index from the files (``reindex``) and the
samples (``ensure_samples``); ``export`` the step-level table (CSV, Parquet); ``labels`` people's
step labels; ``golden`` labelled imports, golden-set export and agreement. Imports run one way:
errors, index → query → schema, files → store → labels → repair, export → golden.
"""
