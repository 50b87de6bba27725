"""Write the metrics' table (from each metric's spec) into the docs between ``<!-- metric_specs -->`` markers.

    python scripts/metric_tables.py          # print the table
    python scripts/metric_tables.py --write  # put it into docs/guide/metrics-and-weaknesses.md

``tests/test_metric_spec.py`` fails while the docs' table differs from the specs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hallu_studio.metrics.registry import EXTRACTOR_SETTINGS, metric_specs  # noqa: E402

DOC = ROOT / "docs" / "guide" / "metrics-and-weaknesses.md"
BEGIN, END = "<!-- metric_specs -->", "<!-- /metric_specs -->"


def specs_markdown() -> str:
    """Every metric's spec as a Markdown table (the docs' table of metrics, ``scripts/metric_tables.py``)."""
    rows = ["| metric (`--metrics`) | name | scores tasks | headline number (Overview, leaderboard) | "
            "per response (Browse) | its scores' key reads |", "|---|---|---|---|---|---|"]
    for spec in metric_specs():
        head = spec.headline
        item = f"{spec.item.name} {spec.item.arrow} ({spec.item.unit})" if spec.item is not None else "—"
        settings = ", ".join(f"`{s}`" for s in spec.settings)
        name = spec.display_name if spec.family == spec.display_name else f"{spec.display_name} ({spec.family})"
        rows.append(f"| `{spec.name}` | {name} | {', '.join(spec.tasks)} | {head.name} {head.arrow} ({head.unit}, "
                    f"{head.better}): {head.meaning} | {item} | {settings} |")
    extractor = ", ".join(f"`{s}`" for s in EXTRACTOR_SETTINGS)
    return "\n".join(rows) + (f"\n\nEvery metric's key also reads the concept extractor's configuration ({extractor}); "
                              "a setting no row names keys no score.")


def with_table(text: str, table: str) -> str:
    """``text`` with the part between the markers replaced by ``table``."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return f"{text[:start]}\n{table}\n{text[end:]}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write the table into {DOC.relative_to(ROOT)}")
    args = ap.parse_args()
    table = specs_markdown()
    if args.write:
        DOC.write_text(with_table(DOC.read_text(encoding="utf-8"), table), encoding="utf-8")
        print(f"wrote the table into {DOC.relative_to(ROOT)}", file=sys.stderr)
    else:
        print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
