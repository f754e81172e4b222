"""asv benchmarks for pylucid (see asv.conf.json). Ops, dtypes, inputs and peers come from
pylucid.bench, the same list that ``python -m pylucid bench`` and tests/test_bench.py use."""
import os
import sys

try:
    import pylucid  # noqa: F401  (an installed pylucid wins)
except ImportError:
    # `asv run --python=same` on a checkout built in place (`python setup.py build_ext -i`):
    # asv imports this suite from the repository, so time the pylucid next to it.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
