"""Importers: pure readers, files in, ``ParsedBenchmark`` / ``ParsedResponses`` out.

One module per source format (``tri_he``, ``reefknot``, ``scene_graphs`` for VG / GQA, ``coco``,
``halfscore``, ``lmms_eval`` (with ``lmms_eval_rows``; model names: ``model_names``), ``toolkits`` for
VLMEvalKit, ``jsonl`` for HalluStudio's own
format); ``pipelines.importing`` writes their results to the store. Formats are
described in ``docs/formats.md``.
"""
