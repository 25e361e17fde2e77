"""The protocol layer: the vocabulary, envelope classification, versions and method tables,
and the rule catalogue. Standard library and msgspec only: no I/O, no numpy, no pandas."""
