"""What Evaluate-by-Edit asks of a reviser (``SceneGraphRuleReviser``, ``LLMReviser``): the type the metric and
``components`` (which builds the one ``scoring.reviser`` names) both name, at home beside the revisers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

if TYPE_CHECKING:
    from ..model import SceneGraph
    from ..reference_scope import Scope
    from .rule_reviser import Revision


class Reviser(Protocol):
    name: str

    def config(self) -> dict[str, Any]: ...

    def revise_many(self, texts: list[str], graphs: list["SceneGraph"], scopes: "Sequence[Scope] | None" = None,
                    absents: Sequence[Callable[[str], bool] | None] | None = None) -> list["Revision"]: ...
