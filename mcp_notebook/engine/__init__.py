"""The engine: one column store, the pairing and direction walks, and the checks.

Sans-IO and free of pandas' tables: numpy columns in, arrays and findings out. The walks
run in C where the extension is built, with the Python walks as reference and fallback;
each rule of the catalogue has one check, registered with :func:`checks.check`.
"""
