"""WordNet 3.0 ships with the package: the lexicon reads it with no system files, ``$WORDNET_DIR`` only overrides
it, scores made with another WordNet (or none) are keyed apart, and ``info`` names what is in force."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hallu_studio.cli import main
from hallu_studio.lexicon import wordnet
from hallu_studio.lexicon.wordnet import (FILES, SHIPPED_DIR, lexicon_key_parts, lexicon_note, load_wordnet,
                                          shipped_digests, wordnet_source)
from hallu_studio.store import Store

ROOT = Path(__file__).resolve().parents[1]


def test_the_shipped_files_are_every_file_the_reader_reads_and_intact():
    digests = shipped_digests()
    assert sorted(digests) == sorted(FILES)
    for name, digest in digests.items():
        with gzip.open(SHIPPED_DIR / f"{name}.gz", "rb") as fh:
            assert hashlib.sha256(fh.read()).hexdigest() == digest, name
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in (SHIPPED_DIR / "LICENSE").read_text()


def test_with_no_override_the_shipped_wordnet_is_in_force(monkeypatch):
    monkeypatch.delenv("WORDNET_DIR", raising=False)
    wn = load_wordnet()
    assert wn is not None and wn.root == SHIPPED_DIR
    assert wordnet_source().origin == "shipped" and lexicon_key_parts() == () and lexicon_note() is None
    assert wn.synset_name("couch") == wn.synset_name("sofa") and wn.base_form("mice") == "mouse"
    assert wn.tag_count("stop", "v") == 162 and "cold" in wn.antonyms("hot")


def test_the_lexicon_never_reads_system_wordnet_files():
    """In a fresh process with no WORDNET_DIR, every file the lexicon opens is the package's own: this fails if
    the reader falls back to Debian's /usr/share/wordnet (or anything outside the package)."""
    code = """
import sys
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == "open" and args
                 and "wordnet" in str(args[0]).lower() else None)
from hallu_studio.lexicon import load_wordnet, singular, lexicon_key_parts
from hallu_studio.lexicon.nouns import is_agent
wn = load_wordnet()
assert wn.synset_name("couch") == wn.synset_name("sofa") and singular("mice") == "mouse"
assert is_agent("girl") and wn.tag_count("stop", "v") == 162 and wn.hypernym_closure("dog")
assert lexicon_key_parts() == ()
print("\\n".join(sorted(set(opened))))
"""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    opened = [line for line in out.stdout.splitlines() if line.strip()]
    assert opened, "the lexicon opened no WordNet file at all"
    outside = [p for p in opened if not p.startswith(str(SHIPPED_DIR)) and not p.endswith(".py")
               and "__pycache__" not in p]
    assert not outside, outside
    assert any(p.endswith("data.noun.gz") for p in opened)


def _copy_shipped(to: Path) -> Path:
    to.mkdir()
    for name in FILES:
        shutil.copy(SHIPPED_DIR / f"{name}.gz", to / f"{name}.gz")
    return to


def test_an_override_with_the_same_files_scores_as_the_shipped_one(tmp_path, monkeypatch):
    same = _copy_shipped(tmp_path / "same")
    with gzip.open(same / "noun.exc.gz", "rb") as fh:  # plain files are read as well as compressed ones
        (same / "noun.exc").write_bytes(fh.read())
    (same / "noun.exc.gz").unlink()
    monkeypatch.setenv("WORDNET_DIR", str(same))
    source = wordnet_source()
    assert source.origin == "WORDNET_DIR" and source.root == same and source.same_as_shipped
    assert lexicon_key_parts() == () and lexicon_note() is None
    assert "the same files as the WordNet 3.0 shipped" in source.describe()
    assert load_wordnet().base_form("mice") == "mouse"


def test_an_override_with_other_files_keys_its_scores_apart_and_says_so(tmp_path, monkeypatch):
    other = _copy_shipped(tmp_path / "other")
    (other / "cntlist.rev.gz").write_bytes(gzip.compress(b"stop%2:38:00:: 1 1\n"))
    monkeypatch.setenv("WORDNET_DIR", str(other))
    parts = lexicon_key_parts()
    assert len(parts) == 1 and parts[0].startswith("wordnet ") and parts != ("no wordnet",)
    assert load_wordnet().tag_count("stop", "v") == 1  # the override is what is read
    assert "not the WordNet 3.0 shipped" in lexicon_note() and str(other) in lexicon_note()
    monkeypatch.setenv("WORDNET_DIR", str(tmp_path))  # a folder with no WordNet: a third key
    assert lexicon_key_parts() == ("no wordnet",) and "WordNet is not available" in lexicon_note()


def test_the_config_keys_of_the_three_lexicons_differ(tmp_path, monkeypatch):
    from hallu_studio.extraction import ParserExtractor
    from hallu_studio.metrics.keys import concepts_config_key

    keys = {}
    monkeypatch.delenv("WORDNET_DIR", raising=False)
    keys["shipped"] = concepts_config_key(ParserExtractor())
    monkeypatch.setenv("WORDNET_DIR", "/usr/share/wordnet")  # Debian's files where installed: the same key
    if (Path("/usr/share/wordnet") / "data.noun").exists():
        assert concepts_config_key(ParserExtractor()) == keys["shipped"]
    other = _copy_shipped(tmp_path / "other")
    (other / "adv.exc.gz").write_bytes(gzip.compress(b"best well\n"))
    monkeypatch.setenv("WORDNET_DIR", str(other))
    keys["other"] = concepts_config_key(ParserExtractor())
    monkeypatch.setenv("WORDNET_DIR", str(tmp_path))
    keys["none"] = concepts_config_key(ParserExtractor())
    assert len(set(keys.values())) == 3, keys


def test_info_names_the_lexical_resources_in_force(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("WORDNET_DIR", raising=False)
    db = tmp_path / "s.duckdb"
    Store(db).close()
    assert main(["info", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "lexical resources:" in out
    assert f"WordNet: WordNet 3.0, shipped with hallu-studio ({SHIPPED_DIR})" in out
    assert "spaCy model: en_core_web_sm" in out and "embedding model: all-MiniLM-L6-v2" in out
    monkeypatch.setenv("WORDNET_DIR", str(tmp_path))  # an override with nothing in it is named, with no store too
    assert main(["info", "--db", str(tmp_path / "none.duckdb")]) == 2
    captured = capsys.readouterr()
    assert f"WordNet: none (WORDNET_DIR={tmp_path} holds no WordNet database files)" in captured.out
    assert "no store at" in captured.err


@pytest.fixture(autouse=True)
def _fresh_digests():
    wordnet._digests.cache_clear()  # a folder's files change between tests; the cache is per process
    yield
    wordnet._digests.cache_clear()


def test_the_app_names_the_wordnet_in_force_in_a_banner_and_in_settings(tmp_path, monkeypatch):
    from hallu_studio.app import AppContext, build_app
    from hallu_studio.app.tabs.settings import settings_html

    def lexicon_banner(ctx: AppContext):
        demo = build_app(ctx)
        return next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "hs-lexicon")

    with Store(tmp_path / "s.duckdb") as store:
        ctx = AppContext(store=store)
        monkeypatch.delenv("WORDNET_DIR", raising=False)
        assert not lexicon_banner(ctx).visible  # the shipped WordNet: nothing to say
        assert "WordNet 3.0, shipped with hallu-studio" in settings_html(ctx)
        empty = tmp_path / "empty"
        empty.mkdir()
        monkeypatch.setenv("WORDNET_DIR", str(empty))
        banner = lexicon_banner(ctx)
        assert banner.visible and "WordNet is not available" in banner.value
        assert f"WORDNET_DIR={empty} holds no WordNet database files" in settings_html(ctx)
