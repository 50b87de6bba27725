"""What every view shares: the process's one store and its settings (read-only after start).

Sessions share this object; anything that differs per user or per tab lives in
``gr.State`` instead, so several annotators never see each other's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..components import Components
from ..annotation.queue_cache import UnratedQueues
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
    queues: UnratedQueues = field(default_factory=UnratedQueues)  # annotators' cached queues and held items
    # The encoder, parser and LLM client the settings name, built once on first use and shared by every pass
    # the app starts (``components.Components``).
    components: Components = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "components", Components(self.settings, self.store.cache))

    def in_force(self) -> InForce:
        """Each metric's configuration every view shows (``studies.in_force``) under the settings in force now."""
        return configs_in_force(self.store, self.settings)
