"""Import from the app: every registered import format (``importers.registry``), each with what it reads, and an
upload that goes through the same ``pipelines.importing.import_format`` as ``hallu-studio import``.

A format that reads a folder (an lmms-eval output folder, a folder of images) gets its files uploaded together:
they are set side by side in a fresh folder, which is what the reader is given. The options that name a second
file or folder (``--images``, ``--regions``, ``--responses``) are the CLI's; the panel says so for the formats
that read them.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Sequence

import gradio as gr

from ..importers.registry import ImportRequest, formats, import_format
from .context import AppContext
from .render.palette import esc, md
from .toasts import Mistake, toast_mistakes

# What the panel asks for beside the upload; a format's other options are given on the command line.
TYPED_OPTIONS = ("benchmark", "model")
CLI_ONLY_OPTIONS = ("images", "regions", "responses")


def format_choices() -> list[tuple[str, str]]:
    """(label, name) of every registered format, in the registry's listing order.

    >>> ("vlmevalkit", "vlmevalkit") in [(n, n) for _, n in format_choices()]
    True
    """
    return [(f"{f.name} — {f.summary}", f.name) for f in formats()]


def format_help(name: str | None) -> str:
    """One line on what a format's upload is and what else it reads (HTML, escaped)."""
    if not name:
        return ""
    fmt = import_format(name)
    typed = [o for o in TYPED_OPTIONS if o in fmt.options]
    cli = ["--" + o for o in CLI_ONLY_OPTIONS if o in fmt.options]
    sentence = [fmt.name + ": " + (fmt.path_help or fmt.summary)]
    if typed:
        sentence.append("reads " + " and ".join(typed) + " from the boxes beside")
    if cli:
        sentence.append("its " + ", ".join(cli) + " options are given on the command line (hallu-studio import "
                        "--format " + fmt.name + " …)")
    return f'<p class="hs-note">{esc("; ".join(sentence) + ".")}</p>'


def upload_path(paths: Sequence[str]) -> Path:
    """What the reader is given: one uploaded file as it is; several side by side in a fresh folder (a folder
    format's files), their names kept."""
    if len(paths) == 1:
        return Path(paths[0])
    folder = Path(tempfile.mkdtemp(prefix="hallu-studio-import-"))
    for path in paths:
        target = folder / Path(path).name
        if target.exists():
            raise Mistake(f"two uploaded files are called {Path(path).name}: a folder holds one of each name")
        shutil.copyfile(path, target)
    return folder


def import_uploaded(ctx: AppContext, name: str | None, paths: Sequence[str] | None, benchmark: str = "",
                    model: str = "") -> str:
    """Import the upload with format ``name``; the reports' lines (Markdown, escaped)."""
    from ..pipelines.importing import import_format as store_import

    if not name:
        raise Mistake("choose a format")
    if not paths:
        raise Mistake("upload the file (or every file of the folder)")
    fmt = import_format(name)
    given = {"benchmark": (benchmark or "").strip() or None, "model": (model or "").strip() or None}
    path = upload_path(list(paths))
    request = ImportRequest(path=path, **{k: v for k, v in given.items() if k in fmt.options and v is not None})
    try:
        reports = store_import(ctx.store, name, request)
    finally:
        if len(paths) > 1:  # the folder upload_path set the files in: read by now, and ours to remove
            shutil.rmtree(path, ignore_errors=True)
    if not reports:
        return f"{md(name)}: nothing was read from the upload"
    lines = [md(r.summary()) for r in reports]
    problems = [md(str(p)) for r in reports for p in r.problems[:5]]
    return "  \n".join(lines + ([f"problems (first {len(problems)}):"] + problems if problems else []))


def build_import(ctx: AppContext) -> Any:
    """The Run view's import panel; returns the import's click event (what follows an import chains on it)."""
    gr.Markdown("**Import** a benchmark, recorded responses (lmms-eval, VLMEvalKit, POPE, AMBER, LLaVA …) or human "
                "judgements made elsewhere, as `hallu-studio import` does; imported runs are then scored below.")
    with gr.Row():
        fmt = gr.Dropdown(format_choices(), value=None, label="format", elem_id="import-format", scale=3)
        files = gr.File(file_count="multiple", label="file (a folder's format: all its files)",
                        elem_id="import-files", scale=3)
        with gr.Column(scale=2, min_width=200):
            benchmark = gr.Textbox(label="benchmark name (formats that read one)", elem_id="import-benchmark")
            model = gr.Textbox(label="model (formats that read one)", elem_id="import-model")
        start = gr.Button("import", variant="primary", elem_id="import-start", scale=0, min_width=120)
    about = gr.HTML(elem_id="import-help")
    status = gr.Markdown(elem_id="import-status")
    fmt.input(lambda name: format_help(name), [fmt], [about], api_visibility="private")

    @toast_mistakes(1)
    def on_import(name: str | None, uploaded: Any, benchmark_name: str, model_name: str) -> str:
        paths = [getattr(f, "name", f) for f in (uploaded or [])]
        return import_uploaded(ctx, name, paths, benchmark_name, model_name)

    return start.click(on_import, [fmt, files, benchmark, model], [status], api_visibility="private")
