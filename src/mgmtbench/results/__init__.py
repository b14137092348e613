"""Results: saved pytest-benchmark runs as one pandas DataFrame, comparisons, charts, reports.

Needs the ``results`` extra (pandas, matplotlib): ``pip install 'mgmtbench[results]'``.
"""

from mgmtbench.results.compare import by_commands, by_rtt, deltas, speedups
from mgmtbench.results.load import ResultsError, load_runs, saved_runs

__all__ = ["ResultsError", "by_commands", "by_rtt", "deltas", "load_runs", "saved_runs", "speedups"]
