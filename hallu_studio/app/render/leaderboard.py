"""The ranked leaderboard as HTML: one table per benchmark, best model first, with CI bars.

Shared by the Overview and the offline report, so both read the same. The CSS is inline
(``LEADERBOARD_CSS``): the report is one self-contained file, and the app needs no extra asset.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...presentation import display_name, model_colour, model_label, number
from .palette import esc

if TYPE_CHECKING:
    from ...studies.ranking import BenchmarkBoard, Cell, Headline, RankedRun

LEADERBOARD_CSS = """
.hs-ov { margin: 0 0 18px 0; }
.hs-ov h3 { margin: 6px 0 4px 0; font-size: 1.1em; }
.hs-ov .hs-ranked-by { color: #555; font-weight: normal; font-size: 0.9em; }
.hs-rank { border-collapse: collapse; width: 100%; table-layout: auto; font-size: 0.9em; }
.hs-ov table.hs-rank th, .hs-ov table.hs-rank td { border: none; border-bottom: 1px solid #e4e4e4; padding: 4px 8px;
  vertical-align: middle; }
.hs-ov table.hs-rank thead th { background: #f6f7f9; font-weight: 600; text-align: center; white-space: nowrap; }
.hs-ov table.hs-rank thead th.hs-fam { border-bottom: 2px solid #c9ced6; letter-spacing: 0.02em; }
.hs-rank thead th .hs-unit { display: block; font-weight: normal; color: #555; font-size: 0.8em;
  white-space: normal; max-width: 170px; margin: 0 auto; line-height: 1.2; }
.hs-headline { font-size: 1.05em; background: #f3f6fb; border-left: 4px solid #2e6bd6; padding: 6px 10px;
  margin: 4px 0 6px 0; }
.hs-probe { color: #333; font-size: 0.9em; margin: 0 0 8px 0; }
.hs-research { margin: 6px 0 0 0; font-size: 0.85em; color: #555; }
.hs-research summary { cursor: pointer; color: #2e5aa8; }
.hs-later { color: #555; font-size: 0.9em; margin: 4px 0; }
.hs-loading { color: #444; padding: 18px 4px; font-size: 1.02em; }
.hs-loading .hs-spin { display: inline-block; width: 14px; height: 14px; margin-right: 8px; vertical-align: -2px;
  border: 2px solid #c9d6ea; border-top-color: #2e6bd6; border-radius: 50%; animation: hs-spin 0.9s linear infinite; }
@keyframes hs-spin { to { transform: rotate(360deg); } }
.hs-rank thead th[title], .hs-rank td[title] { cursor: help; }
.hs-ov table.hs-rank td.hs-model { white-space: nowrap; text-align: left; }
.hs-ov table.hs-rank td.hs-rankno { text-align: center; font-weight: 700; color: #333; width: 1.5em; }
.hs-ov table.hs-rank td.hs-count { text-align: right; color: #444; white-space: nowrap; }
.hs-ov table.hs-rank td.hs-num { text-align: center; white-space: nowrap; min-width: 96px; }
.hs-rank td.hs-num b { font-size: 1.05em; }
.hs-rank td.hs-best b { text-decoration: underline; text-decoration-thickness: 2px; }
.hs-rank .hs-sub { display: block; color: #777; font-size: 0.78em; line-height: 1.1; }
.hs-rank .hs-partial { display: block; color: #9a5b00; font-size: 0.78em; line-height: 1.1; }
.hs-rank .hs-none { color: #888; font-style: italic; font-size: 0.85em; white-space: normal; }
.hs-rank svg { display: block; margin: 2px auto 0 auto; }
.hs-swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 6px;
  vertical-align: -1px; }
.hs-syn { font-size: 0.72em; color: #555; border: 1px solid #bbb; border-radius: 6px; padding: 0 4px;
  margin-left: 4px; }
.hs-notes { color: #555; font-size: 0.85em; margin: 4px 0 0 0; }
.hs-notes li { margin: 1px 0; }
.hs-defs { color: #444; font-size: 0.85em; margin: 2px 0 0 0; }
.hs-defs li { margin: 2px 0; }
.hs-figs { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 12px 18px; margin: 10px 0; }
.hs-figs figure { margin: 0; min-width: 0; }
.hs-figs figcaption { font-weight: 600; font-size: 0.92em; margin: 0 0 2px 0; }
.hs-figs figcaption span { font-weight: normal; color: #666; }
.hs-figs img { max-width: 100%; height: auto; display: block; }
"""

_BAR_W, _BAR_H = 96, 10


def model_cell(model: str, synthetic: bool, name: str | None = None) -> str:
    """Swatch in the model's colour, its short name (the run's ``name`` where given: ``presentation.run_names``),
    the full spec on hover, and a synthetic tag."""
    full = model_label(model, synthetic)
    tag = '<span class="hs-syn" title="a probe model: a deterministic describer that injects known ' \
          'hallucinations, not a real LVLM">synthetic</span>' if synthetic else ""
    return (f'<span class="hs-swatch" style="background:{model_colour(model)}"></span>'
            f'<span title="{esc(full)}">{esc(name or display_name(model))}</span>{tag}')


def ci_bar(cell: "Cell", lo: float, hi: float, colour: str) -> str:
    """An inline SVG: the interval as a line and the value as a dot, on the column's common scale."""
    if cell.value is None:
        return ""
    span = (hi - lo) or 1.0

    def x(v: float | None) -> float:
        v = cell.value if v is None else v
        return round(3 + (_BAR_W - 6) * (min(hi, max(lo, v)) - lo) / span, 1)

    return (f'<svg width="{_BAR_W}" height="{_BAR_H}" viewBox="0 0 {_BAR_W} {_BAR_H}" aria-hidden="true">'
            f'<line x1="3" y1="5" x2="{_BAR_W - 3}" y2="5" stroke="#e3e3e3" stroke-width="1"/>'
            f'<line x1="{x(cell.low)}" y1="5" x2="{x(cell.high)}" y2="5" stroke="{colour}" stroke-width="3" '
            f'stroke-linecap="round"/><circle cx="{x(None)}" cy="5" r="3.6" fill="{colour}" stroke="#222" '
            f'stroke-width="0.8"/></svg>')


def _scale(board: "BenchmarkBoard", h: "Headline") -> tuple[float, float]:
    xs = [v for r in board.runs for c in [r.cells.get(h.column)] if c is not None
          for v in (c.value, c.low, c.high) if v is not None]
    if not xs:
        return 0.0, 1.0
    lo, hi = min(xs), max(xs)
    pad = (hi - lo) * 0.05 or abs(hi) * 0.05 or 1.0
    return lo - pad, hi + pad


def _number_cell(run: "RankedRun", h: "Headline", scale: tuple[float, float], best: bool, static: bool = False) -> str:
    cell = run.cells[h.column]
    tooltip = _without_doc_paths(h.tooltip) if static else h.tooltip
    if cell.value is None:
        if cell.applicable:
            text = f"{cell.note} ({cell.scored:,} of {cell.applicable:,} scored)" if cell.scored else cell.note
        else:
            text = cell.note
        return f'<td class="hs-num" title="{esc(tooltip)}"><span class="hs-none">{esc(text)}</span></td>'
    interval = ""
    tip = f"{h.family} {h.name} = {number(cell.value)} {h.unit}"
    if cell.low is not None and cell.high is not None:
        interval = f'<span class="hs-sub">{esc(number(cell.low))} – {esc(number(cell.high))}</span>'
        tip += f"; 95% bootstrap interval by image {number(cell.low)} – {number(cell.high)}"
    tip += f"; {cell.scored:,} of {cell.applicable:,} responses scored"
    partial = (f'<span class="hs-partial">{cell.scored:,} of {cell.applicable:,} scored</span>'
               if cell.partial else "")
    return (f'<td class="hs-num{" hs-best" if best else ""}" title="{esc(tip)}"><b>{esc(number(cell.value))}</b>'
            f'{ci_bar(cell, *scale, model_colour(run.model))}{interval}{partial}</td>')


def _without_doc_paths(text: str) -> str:
    """A sentence without its "(docs/...)" pointers: a reader of a shared file has no checkout to open them in."""
    return re.sub(r"\s*\((?:see )?docs/[^)]*\)", "", text)


def definitions_html(headlines: "list[Headline]") -> str:
    """What each headline number means and where it misleads, written out (a shared file has no hover)."""
    items = "".join(
        f"<li><b>{esc(h.family)} {esc(h.name)}</b> {h.arrow} ({esc(h.unit)}, "
        f"{'lower' if h.lower_is_better else 'higher'} is better): {esc(_without_doc_paths(h.meaning))} "
        f"<i>Misleads:</i> {esc(_without_doc_paths(h.misleads))}</li>" for h in headlines)
    return f'<ul class="hs-defs">{items}</ul>' if items else ""


# What a probe is, for a reader who has never met one (the Overview and the report say it in the page, not in a hover).
PROBE_NOTE = ("What is a probe? Runs tagged synthetic are probe models, not real AI models: test writers that "
              "describe each image from a list of what is truly in it and make mistakes on purpose. The number after "
              "\u201cprobe\u201d is its rate: the chance that each thing it says (an object, a colour, a relation, a "
              "count, a yes/no answer) is made wrong, so probe 0.3 gets about 3 in 10 wrong. A metric that works "
              "ranks the probes by their rate.")


def plain_unit(h: "Headline") -> str:
    """The headline's unit in plain words (its spec's ``Number.plain``), else its short unit."""
    return h.number.plain or h.unit


def headline_sentence(board: "BenchmarkBoard") -> str | None:
    """Who hallucinates least on the board's ranking number, by how much against the next, who most, and what
    the number is in plain words; None while nothing is ranked.

    The gap is to the runner-up; when their intervals overlap the sentence says the order is not settled.
    """
    h = board.ranked_by
    ranked = [r for r in board.runs if r.rank is not None and h is not None]
    if h is None or not ranked:
        return None
    best = ranked[0]
    cell = best.cells[h.column]
    text = (f"{best.name or display_name(best.model)} hallucinates least on {board.benchmark}: {h.family} {h.name} "
            f"{number(cell.value)}")
    if cell.low is not None and cell.high is not None:
        text += f" (95% CI {number(cell.low)}–{number(cell.high)})"
    if len(ranked) > 1:
        second, worst = ranked[1], ranked[-1]
        other = second.cells[h.column]
        gap = abs(other.value - cell.value)
        text += (f", against {number(other.value)} for the next, {second.name or display_name(second.model)} "
                 f"({number(gap)} {'lower' if h.lower_is_better else 'higher'}")
        overlap = None not in (cell.low, cell.high, other.low, other.high) and \
            max(cell.low, other.low) <= min(cell.high, other.high)
        text += ", though their intervals overlap)" if overlap else ")"
        if worst is not second:
            text += (f", and {number(worst.cells[h.column].value)} for "
                     f"{worst.name or display_name(worst.model)}, which hallucinates most")
    text += f". {h.name} {h.arrow}: {plain_unit(h)}; {h.number.better}."
    if all(r.synthetic for r in ranked):
        text += " These are synthetic probe models, not real AI models."
    if any(r.cells[h.column].partial for r in ranked):
        text += " Not every response is scored yet: the numbers may still move."
    return text


def is_ranked(board: "BenchmarkBoard") -> bool:
    """Whether any run of the board has a number to rank by."""
    return board.ranked_by is not None and any(r.rank is not None for r in board.runs)


def ranked_first(boards: "list[BenchmarkBoard]") -> "list[BenchmarkBoard]":
    """The boards with a ranking first, in their order, then the ones with none yet (an imported human study nobody
    has scored, say): a page never opens on a block with nothing to read."""
    return [b for b in boards if is_ranked(b)] + [b for b in boards if not is_ranked(b)]


def waiting_html(boards: "list[BenchmarkBoard]") -> str:
    """One line for the benchmarks with runs but no number yet, after the ranked boards.

    >>> from hallu_studio.studies.ranking import BenchmarkBoard
    >>> waiting_html([BenchmarkBoard("haelm", [], {}, [], None)])
    '<p class="hs-later">Not scored yet (no numbers to rank by): <b>haelm</b> (0 runs). Their runs are stored; their numbers appear here once a researcher scores them.</p>'
    """
    if not boards:
        return ""
    names = ", ".join(f"<b>{esc(b.benchmark)}</b> ({len(b.runs)} run{'s' if len(b.runs) != 1 else ''})"
                      for b in boards)
    return (f'<p class="hs-later">Not scored yet (no numbers to rank by): {names}. Their runs are stored; their '
            "numbers appear here once a researcher scores them.</p>")


def board_html(board: "BenchmarkBoard", static: bool = False) -> str:
    """One benchmark's ranked table, with the notes on what is not applicable, not scored, or partial.

    In the app, a sentence above the table says who hallucinates least and what the number means, a line says what
    a probe is (where there are any), and what only researchers need (configurations, definitions, the command
    that scores what is missing) sits in a closed "For researchers" fold. ``static`` (the shareable report): every
    explanation is written out below the table, none is only on hover, and nothing points to a file the reader
    does not have; the models' full specifications are listed."""
    shown = [h for h in board.headlines if any(r.cells[h.column].value is not None or r.cells[h.column].scored
                                              for r in board.runs)]
    unscored = [h for h in board.headlines if h not in shown]
    ranked = (f'ranked by {esc(board.ranked_by.family)} {esc(board.ranked_by.name)} {board.ranked_by.arrow} '
              f'({"lower" if board.ranked_by.lower_is_better else "higher"} is better), best first'
              if board.ranked_by else "no headline number yet: nothing to rank by")
    top, sub = _header_rows(board, shown, static)
    body = _body_rows(board, shown, static)
    notes = _notes(board, shown, unscored, static)
    table = (f'<table class="hs-rank"><thead><tr>{"".join(top)}</tr><tr>{"".join(sub)}</tr></thead>'
             f'<tbody>{"".join(body)}</tbody></table>' if shown else
             '<p class="hs-none">no scored responses yet</p>')
    lead = ""
    if not static:
        sentence = headline_sentence(board)
        lead = f'<p class="hs-headline">{esc(sentence)}</p>' if sentence else ""
        if any(r.synthetic for r in board.runs):
            lead += f'<p class="hs-probe">{esc(PROBE_NOTE)}</p>'
    after = definitions_html(shown) if static else _for_researchers(board, shown, unscored)
    return (f'<section class="hs-ov" data-benchmark="{esc(board.benchmark)}"><h3>{esc(board.benchmark)} '
            f'<span class="hs-ranked-by">· {len(board.runs)} runs · {ranked}</span></h3>{lead}{table}'
            f'<ul class="hs-notes">{"".join(notes)}</ul>{after}</section>')


def _for_researchers(board: "BenchmarkBoard", shown: "list[Headline]", unscored: "list[Headline]") -> str:
    """The app's closed fold: what each number means and where it misleads, why the other metrics do not apply,
    the configurations, and the command that scores what is missing (viewers see none of it unless they open it)."""
    from ...studies.ranking import GUIDE

    items = []
    if board.not_applicable:
        items.append("<li>Metrics that do not apply here: " + "; ".join(
            f"<b>{esc(family)}</b> ({esc(reason)})" for family, reason in board.not_applicable.items()) + ".</li>")
    if unscored:
        metrics = ",".join(dict.fromkeys(h.metric for h in unscored))
        items.append(f"<li>To score what is missing: <code>hallu-studio score --metrics {esc(metrics)}</code> "
                     "(or the Run view).</li>")
    configs = [f"{h.family} {h.name}: {board.configs[h.metric]}" for h in shown if h.metric in board.configs]
    if configs:
        items.append(f'<li class="hs-configs">Configurations: {esc("; ".join(configs))}.</li>')
    items += [f"<li>Shown under other configurations than the current settings': {esc(n)}.</li>"
              for n in board.config_notes]
    items.append(f"<li>Where each number misleads, at length: <code>{esc(GUIDE)}</code>.</li>")
    return (f'<details class="hs-research"><summary>For researchers: what each number measures and where it '
            f'misleads, configurations</summary>{definitions_html(shown)}<ul class="hs-notes">{"".join(items)}</ul>'
            f'</details>')


def _header_rows(board: "BenchmarkBoard", shown: "list[Headline]", static: bool) -> tuple[list[str], list[str]]:
    """The table's two header rows: rank, model, responses and the metric families; each family's numbers."""
    families = [f for f in board.families if any(h.family == f for h in shown)]
    top = ['<th rowspan="2" title="rank on the ranking number">#</th>', '<th rowspan="2">model</th>',
           '<th rowspan="2" title="responses of the run (as in the Run view)">responses</th>']
    sub = []
    for family in families:
        members = [h for h in shown if h.family == family]
        top.append(f'<th class="hs-fam" colspan="{len(members)}">{esc(family)}</th>')
        for h in members:
            tip = _without_doc_paths(h.tooltip) if static else h.tooltip
            sub.append(f'<th title="{esc(tip)}">{esc(h.name)} {h.arrow}<span class="hs-unit">{esc(plain_unit(h))}'
                       f'</span></th>')
    return top, sub


def _body_rows(board: "BenchmarkBoard", shown: "list[Headline]", static: bool) -> list[str]:
    """A row per run, its best values underlined."""
    scales = {h.column: _scale(board, h) for h in shown}
    best = {}
    for h in shown:
        values = [r.cells[h.column].value for r in board.runs if r.cells[h.column].value is not None]
        if values:
            best[h.column] = min(values) if h.lower_is_better else max(values)
    body = []
    for run in board.runs:
        cells = [f'<td class="hs-rankno">{run.rank if run.rank is not None else "–"}</td>',
                 f'<td class="hs-model">{model_cell(run.model, run.synthetic, run.name)}</td>',
                 f'<td class="hs-count">{run.responses:,}</td>']
        cells += [_number_cell(run, h, scales[h.column], run.cells[h.column].value == best.get(h.column), static)
                  for h in shown]
        body.append(f'<tr data-run="{esc(run.run_id)}">{"".join(cells)}</tr>')
    return body


def _notes(board: "BenchmarkBoard", shown: "list[Headline]", unscored: "list[Headline]", static: bool) -> list[str]:
    """What the table does not say: partial runs, metrics not scored, problems, and how to read it (in a report,
    also what does not apply, the configurations and the models' full names)."""
    notes = []
    partial = sorted({r.name or display_name(r.model) for r in board.runs for h in shown if r.cells[h.column].partial})
    if partial:
        note = "not every response scored yet; numbers may move"
        if board.ranked_by is not None:
            cells = [r.cells[board.ranked_by.column] for r in board.runs if r.cells[board.ranked_by.column].partial]
            if cells:  # how little the ranking may rest on so far, e.g. the first start's slice
                least = min(cells, key=lambda c: c.scored)
                note = (f"the ranking rests on as few as {least.scored:,} of {least.applicable:,} responses per run "
                        "so far; numbers and order may change")
        notes.append(f"<li>Partial runs ({esc(note)}): {esc(', '.join(partial))}.</li>")
    if board.not_applicable and static:  # a report has no fold: the reasons inline (the app's are in its fold)
        families = "; ".join(f"<b>{esc(family)}</b> ({esc(reason)})" for family, reason in board.not_applicable.items())
        notes.append(f"<li>Metrics not applicable to {esc(board.benchmark)}: {families}.</li>")
    if unscored:  # said in words: the command that scores them is a researcher's (the app's fold)
        names = ", ".join(f"{h.family} {h.name}" for h in unscored)
        its = "Their numbers are" if len(unscored) > 1 else "Its number is"
        notes.append(f"<li>Not scored on this benchmark yet: {esc(names)}. {its} missing, not zero, and will "
                     "appear here once a researcher scores the responses.</li>")
    notes += [f"<li>{esc(p)}</li>" for p in board.problems]
    if static:
        configs = [f"{h.family} {h.name}: {board.configs[h.metric]}" for h in shown if h.metric in board.configs]
        if configs:
            notes.append(f'<li class="hs-configs">Configurations: {esc("; ".join(configs))}.</li>')
        notes += [f"<li>Shown under other configurations than the current settings': {esc(n)}.</li>"
                  for n in board.config_notes]
        models = sorted({(r.name or display_name(r.model), model_label(r.model, r.synthetic)) for r in board.runs})
        notes.append("<li>Models: " + "; ".join(f"<b>{esc(short)}</b> = <code>{esc(full)}</code>"
                                               for short, full in models) + ".</li>")
        notes.append("<li>Under each number: its 95% bootstrap interval resampled by image, drawn as a bar on a "
                     "scale shared by the column; underlined: the best value. What each number means:</li>")
    else:
        notes.append("<li>↓ lower is better, ↑ higher is better. Under each number: the range it is 95% sure to lie "
                     "in (resampling the images), drawn as a bar on a scale shared by the column; underlined: the "
                     "best value.</li>")
    return notes
