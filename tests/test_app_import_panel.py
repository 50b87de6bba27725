"""The app lists every registered import format and imports an upload through the same path as the CLI: a format
added as one module appears in the app's list with no app change; a folder's files uploaded together are read as
one folder; a bad file is refused with the file and the reason."""

from __future__ import annotations

import pytest

from hallu_studio.app.context import AppContext
from hallu_studio.app.import_panel import format_choices, format_help, import_uploaded, upload_path
from hallu_studio.importers import registry
from hallu_studio.importers.registry import ImportFormat

LINES = ('{"id": "own/1", "benchmark": "own", "image_key": "1", "reference_text": "A grey cat on a mat."}\n'
         '{"id": "own/2", "benchmark": "own", "image_key": "2", "reference_objects": ["dog"]}\n')


def test_every_registered_format_is_listed_and_a_new_one_appears(monkeypatch):
    names = [name for _, name in format_choices()]
    assert names == registry.format_names() and {"vlmevalkit", "lmms-eval", "image-folder"} <= set(names)

    def read(request, stored):
        yield from ()

    toy = ImportFormat("toy-format", "a toy's results", ("path", "model"), read, path_help="the toy's <file>")
    monkeypatch.setitem(registry._FORMATS, toy.name, toy)
    assert ("toy-format — a toy's results", "toy-format") in format_choices()
    help_line = format_help("toy-format")
    assert "a toy" not in help_line and "file" in help_line and "<file>" not in help_line and "reads model" in help_line
    assert "images" in format_help("vg") and "command line" in format_help("vg")  # options the panel leaves to the CLI


def test_an_upload_is_imported_as_the_cli_imports_it(store, tmp_path):
    path = tmp_path / "own.jsonl"
    path.write_text(LINES, encoding="utf-8")
    ctx = AppContext(store=store)
    line = import_uploaded(ctx, "jsonl", [str(path)])
    assert "own" in line and store.sample_ids("own") == {"own/1", "own/2"}
    again = import_uploaded(ctx, "jsonl", [str(path)])
    assert "2 already present" in again or "already" in again  # importing twice adds nothing


def test_several_files_are_one_folder_and_bad_input_is_refused_by_name(store, tmp_path):
    a, b = tmp_path / "x" / "a.txt", tmp_path / "y" / "b.txt"
    for p in (a, b):
        p.parent.mkdir()
        p.write_text(p.name)
    folder = upload_path([str(a), str(b)])
    assert folder.is_dir() and sorted(p.name for p in folder.iterdir()) == ["a.txt", "b.txt"]
    c = tmp_path / "z" / "a.txt"
    c.parent.mkdir()
    c.write_text("other")
    with pytest.raises(ValueError, match="two uploaded files are called a.txt"):
        upload_path([str(a), str(c)])

    ctx = AppContext(store=store)
    with pytest.raises(ValueError, match="choose a format"):
        import_uploaded(ctx, None, [str(a)])
    with pytest.raises(ValueError, match="upload the file"):
        import_uploaded(ctx, "jsonl", [])
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(ValueError, match="broken.json"):
        import_uploaded(ctx, "vlmevalkit", [str(broken)])
