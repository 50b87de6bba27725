"""The import-format registry: one module per format, read by the CLI, the docs and Python callers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hallu_studio.importers import registry
from hallu_studio.importers.base import ParsedBenchmark
from hallu_studio.model import Benchmark, Sample
from hallu_studio.pipelines.importing import import_format
from hallu_studio.store import Store

ROOT = Path(__file__).resolve().parents[1]


def test_every_format_is_listed_in_help_and_docs():
    names = registry.format_names()
    assert {"sample", "tri-he", "lmms-eval", "vlmevalkit", "human-judgements"} <= set(names)
    help_text = subprocess.run([sys.executable, "-m", "hallu_studio", "import", "--help"], capture_output=True,
                               text=True, check=True, cwd=ROOT).stdout
    docs = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for fmt in registry.formats():
        assert fmt.name in help_text and fmt.summary.split()[0] in help_text
        assert f"`{fmt.name}`" in docs, f"docs/formats.md does not describe --format {fmt.name}"


def test_a_registered_format_imports_through_the_pipeline(tmp_path):
    def read(request, stored):
        assert stored.sample_ids("toy") == set()  # readers may ask the store, never write it
        yield ParsedBenchmark(Benchmark("toy"), [Sample(id="toy/1", benchmark="toy", image_key="1",
                                                        reference_text=["a cat"])])
        assert stored.sample_ids("toy") == {"toy/1"}  # what was yielded is stored before the reader goes on

    fmt = registry.register(registry.ImportFormat("toy-format", "a toy", ("path",), read))
    try:
        with Store(tmp_path / "s.duckdb") as store:
            with pytest.raises(ValueError, match="needs a PATH"):
                import_format(store, "toy-format", registry.ImportRequest())
            with pytest.raises(ValueError, match="does not take --model .*formats that do: .*lmms-eval"):
                import_format(store, "toy-format", registry.ImportRequest(path=tmp_path, model="m"))
            reports = import_format(store, "toy-format", registry.ImportRequest(path=tmp_path))
            assert [r.added for r in reports] == [1]
    finally:
        registry._FORMATS.pop(fmt.name)


def test_a_format_registered_twice_is_refused():
    fmt = registry.import_format("sample")
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(registry.ImportFormat("sample", "again", (), fmt.read))
