"""The worked examples in the importers' docstrings are tests too."""

import doctest
import importlib

import pytest

MODULES = ["hallu_studio.images", "hallu_studio.importers.triplets", "hallu_studio.importers.tri_he",
           "hallu_studio.importers.reefknot_prompts", "hallu_studio.importers.recorded",
           "hallu_studio.importers.halfscore", "hallu_studio.importers.coco", "hallu_studio.importers.reading",
           "hallu_studio.importers.human.base",
           "hallu_studio.importers.human.haelm", "hallu_studio.importers.human.mhaldetect",
           "hallu_studio.importers.human.faithscore", "hallu_studio.importers.human.iiw400",
           "hallu_studio.importers.human.generic", "hallu_studio.importers.model_names",
           "hallu_studio.importers.lmms_eval_rows"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
