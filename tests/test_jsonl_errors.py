"""A malformed JSON or JSONL record is told where it is and what was found there, never cut off."""

from __future__ import annotations

import pytest

from hallu_studio.importers.base import ImportProblem
from hallu_studio.importers.reading import FatalImportError, iter_jsonl, read_json


def test_a_bad_jsonl_line_names_its_line_column_and_the_text_found(tmp_path):
    path = tmp_path / "answers.jsonl"
    path.write_text('{"id": "a", "response": "fine"}\n\n{"id": "b", "response": "a\ttab"}\n{"id": "c" "x": 1}\n[1]\n',
                    encoding="utf-8")
    problems: list[ImportProblem] = []
    good = list(iter_jsonl(path, problems))
    assert [n for n, _ in good] == [1]  # the good line still goes through
    assert [str(p) for p in problems] == [
        "answers.jsonl line 3: not valid JSON at column 27: invalid control character; found '\\t' in "
        "'{\"id\": \"b\", \"response\": \"a\\ttab\"}'",
        "answers.jsonl line 4: not valid JSON at column 12: expecting ',' delimiter; found '\"' in "
        "'{\"id\": \"c\" \"x\": 1}'",
        "answers.jsonl line 5: expected a JSON object, got list"]


def test_a_bad_json_file_names_the_line_and_column_and_shows_a_short_excerpt(tmp_path):
    path = tmp_path / "graphs.json"
    path.write_text('[\n  {"id": 1},\n  {"id": 2,, "name": "' + "x" * 200 + '"}\n]', encoding="utf-8")
    with pytest.raises(FatalImportError) as exc:
        read_json(path)
    message = str(exc.value)
    assert message.startswith("graphs.json: not valid JSON at line 3, column 12: expecting property name enclosed "
                              "in double quotes; found ',' in ")
    assert message.endswith("…") and len(message) < 220  # the excerpt is around the spot, not the whole line
    path.write_text('{"id": 1', encoding="utf-8")
    with pytest.raises(FatalImportError, match="line 1, column 9: .*found the end of the text"):
        read_json(path)
