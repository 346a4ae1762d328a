"""What only developers run, from a checkout: fitting the rules kept as data in the package
(fit_declines with declines_evidence, fit_quotes, language_offsets), the reader that does not
ship (reader_*, train_reader), a scan of native code (native_code), and the benchmarks (bench/).

Not in the wheel: run as `python -m tools.NAME` from the repository root.
"""
