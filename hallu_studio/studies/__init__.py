"""Studies: how well metrics and judges agree with people, and with a known truth.

Pure functions over plain data (``correlation``, ``agreement``, ``judges``,
``bradley_terry``, ``probe_detection``); ``collect`` gathers that data from a store
and ``leaderboard`` aggregates stored scores per model with bootstrap intervals.
"""

from .agreement import krippendorff_alpha
from .bradley_terry import bradley_terry
from .correlation import CorrelationResult, correlate
from .judges import JudgeAccuracy, judge_accuracy
from .leaderboard import leaderboard

__all__ = ["CorrelationResult", "JudgeAccuracy", "bradley_terry", "correlate", "judge_accuracy",
           "krippendorff_alpha", "leaderboard"]
