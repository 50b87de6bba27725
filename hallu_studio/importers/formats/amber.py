"""``--format amber``: AMBER's data folder (annotations and queries) as benchmark ``amber``, or a response file in
AMBER's format (a JSON list of ``{"id", "response"}``) for the stored ``amber`` benchmark."""

from __future__ import annotations

from typing import Iterator

from ..registry import ImportFormat, ImportRequest, Parsed, StoredCorpus, register


def read(request: ImportRequest, stored: StoredCorpus) -> Iterator[Parsed]:
    from ..amber import BENCHMARK, is_response_file, read_amber, read_amber_responses

    if is_response_file(request.path):
        if request.images is not None:
            raise ValueError("--format amber: --images goes with AMBER's data folder, not with a response file")
        yield read_amber_responses(request.path, stored.sample_ids(BENCHMARK), request.model)
        return
    if request.model is not None:
        raise ValueError("--format amber: --model names the model of a response file; PATH is AMBER's data folder")
    yield read_amber(request.path, request.images)


FORMAT = register(ImportFormat("amber", "AMBER: its data folder (annotations, queries) as benchmark amber, or "
                                        "responses in AMBER's format ([{id, response}])",
                               ("path", "images", "model"), read,
                               path_help="AMBER's data folder (or annotations.json), or a JSON list of "
                                         "{id, response}"))
