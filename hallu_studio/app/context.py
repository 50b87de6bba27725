"""What every view shares: the process's one store and its settings (read-only after start).

Sessions share this object; anything that differs per user or per tab lives in
``gr.State`` instead, so several annotators never see each other's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config import Settings
from ..store import Store
from ..studies.in_force import InForce, configs_in_force
from .background import BackgroundWork
from .id_lists import IdLists
from .jobs import JobQueue
from .overview_cache import LeaderboardCache


@dataclass(frozen=True)
class AppContext:
    store: Store
    settings: Settings = field(default_factory=Settings)
    auth_enabled: bool = False  # True: the annotator is the signed-in user, never a typed name
    jobs: JobQueue = field(default_factory=JobQueue)  # model runs, one at a time per process
    leaderboards: LeaderboardCache = field(default_factory=LeaderboardCache)  # derived, keyed by scores
    background: BackgroundWork = field(default_factory=BackgroundWork)  # the first start's demo scoring
    id_lists: IdLists = field(default_factory=IdLists)  # Browse filters' id lists, for Inspect's prev / next

    def in_force(self) -> InForce:
        """Each metric's configuration every view shows (``studies.in_force``) under the settings in force now."""
        return configs_in_force(self.store, self.settings)
