"""The benchmarks: load generators, peer servers and side-by-side comparisons.

``python -m bench.run`` (``make bench``, ``make bench-quick``) runs every
configuration in one go and writes JSON, a markdown table and a PNG plot.
"""
