"""``hallu-studio study``: metrics against people, agreement between people, and probe detection."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..model import APP_SOURCE
from ..names import unknown_name
from ..presentation import number, with_interval
from ..store import Store
from .common import add_db_option, check_benchmark, check_metrics, open_store, open_store_for_reading, split_names
from .output import add_format_option, columns_of, write_records


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("study", help="metrics against people (the app's annotators and imported human studies), "
                                     "agreement, probe detection")
    add_db_option(p)
    p.add_argument("--metrics", default=None, help="comma-separated metrics to include (default: all scored)")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates (default 1000)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--value", action="append", default=[], metavar="METRIC=KEY",
                   help="correlate this per-response value of a metric (e.g. emd=object); repeatable")
    # The papers' analyses (hallu_studio.studies.analyses): one table and one plot each.
    p.add_argument("--analysis", default=None, metavar="NAME",
                   help="run one of the papers' analyses instead: frequent-pairs, length, domain-shift, "
                        "vocabulary-shift, extractor-robustness, judge-agreement, confidence-layers, "
                        "run-comparison, probe-validity")
    p.add_argument("--output-dir", default=None, metavar="DIR",
                   help="where --analysis writes its plot (PNG; default: the current directory, and no plot "
                        "with --format jsonl or csv unless this is given)")
    p.add_argument("--benchmark", default=None, help="with --analysis: only this benchmark's runs")
    p.add_argument("--runs", default=None, help="with --analysis: comma-separated run ids (run-comparison: "
                                                "the first is the baseline)")
    p.add_argument("--limit", type=int, default=None, help="with --analysis: responses per run re-scored in memory")
    p.add_argument("--source", default=None, metavar="NAME",
                   help="whose judgements: 'app' (this studio's annotators) or an imported study's name "
                        "(import --format human-judgements); default: the app's, then every imported study")
    p.add_argument("--no-baseline", action="store_true",
                   help="imported studies: leave out the naive MiniLM baseline (saves loading the encoder)")
    p.add_argument("--no-facts", action="store_true",
                   help="imported studies: do not run the Tri-HE judge on labelled facts")
    add_format_option(p)
    p.set_defaults(func=run)


def run_one_analysis(args: argparse.Namespace) -> int:
    """``--analysis NAME``: print the analysis's table and notes, write its plot to ``--output-dir``.

    With ``--format jsonl`` or ``csv`` stdout holds only the rows; the title, notes and
    the plot's path go to stderr.
    """
    from pathlib import Path

    from ..studies.analyses import run_analysis
    from .common import settings_from

    from ..metrics.registry import parse_metric_names

    options: dict[str, Any] = {"n_boot": args.n_boot, "seed": args.seed}
    if args.benchmark:
        options["benchmark"] = args.benchmark
    if args.runs:
        options["runs"] = split_names(args.runs)
    if args.metrics:
        # Analyses may re-score in memory: a metric need not be scored in the store, only exist.
        options["metrics"] = parse_metric_names(args.metrics)
    if args.limit is not None:
        options["limit"] = args.limit
    # Only the length analysis writes (it derives and scores truncated runs).
    with (open_store(args) if args.analysis == "length" else open_store_for_reading(args)) as store:
        check_benchmark(store, args.benchmark)
        result = run_analysis(store, args.analysis, settings_from(args), **options)
    machine = args.format != "table"
    say = sys.stderr if machine else sys.stdout
    print(result.title, file=say)
    if machine:
        write_records(result.rows, columns_of(result.rows, result.columns), args.format)
    else:
        print(result.table_text() if result.rows else "  (no rows)")
    for note in result.notes:
        print(f"note: {note}", file=say)
    if machine and args.output_dir is None:
        return 0
    out_dir = Path(args.output_dir or ".")
    out_dir.mkdir(parents=True, exist_ok=True)
    plot = out_dir / f"{result.name}.png"
    result.figure.savefig(plot, dpi=120)
    print(f"plot: {plot}", file=say)
    return 0


def _value_keys(store: Store, specs: list[str]) -> dict[str, str]:
    """``--value METRIC=KEY`` options as ``{metric: key}``, each a value some stored score of the metric holds."""
    value_keys = {}
    for spec in specs:
        metric, sep, key = spec.partition("=")
        names = check_metrics(store, metric)
        if not sep or not key.strip() or not names or len(names) != 1:
            raise ValueError(f"--value must look like METRIC=KEY, got {spec!r}")
        metric = names[0]
        held = store.score_value_keys(metric)
        if key.strip() not in held:
            raise ValueError(unknown_name(f"{metric} value", key.strip(), held,
                                          listing=f"{metric}'s numeric values in the store"))
        value_keys[metric] = key.strip()
    return value_keys


def _refuse_options_that_do_not_apply(args: argparse.Namespace) -> None:
    """An option the chosen mode ignores would be dropped silently: name it instead."""
    if args.analysis:
        ignored = [flag for flag, given in (("--value", bool(args.value)), ("--source", args.source is not None),
                                            ("--no-baseline", args.no_baseline), ("--no-facts", args.no_facts))
                   if given]
    else:
        ignored = [flag for flag, given in (("--benchmark", args.benchmark is not None), ("--runs", args.runs is not None),
                                            ("--limit", args.limit is not None)) if given]
    if ignored:
        mode = f"--analysis {args.analysis}" if args.analysis else "the correlation study (no --analysis)"
        raise ValueError(f"{' and '.join(ignored)} do{'es' if len(ignored) == 1 else ''} not apply to {mode}")


def run(args: argparse.Namespace) -> int:
    _refuse_options_that_do_not_apply(args)
    if args.analysis:
        return run_one_analysis(args)
    from ..studies.collect import (annotator_agreement, correlation_table, judge_accuracy_table,
                                   probe_detection_records, probe_detection_table)
    from ..studies.human_sources import human_agreement
    from .common import settings_from

    with open_store_for_reading(args) as store:
        metrics = check_metrics(store, args.metrics)
        value_keys = _value_keys(store, args.value)
        imported = _imported_sources(store, args.source)
        reports = [human_agreement(store, name, settings=settings_from(args), metrics=metrics, n_boot=args.n_boot,
                                   seed=args.seed, baseline=not args.no_baseline, judge_facts=not args.no_facts)
                   for name in imported]
        if args.source not in (None, APP_SOURCE):
            if args.format != "table":
                rows = [row for r in reports for row in r.rows()]
                write_records(rows, columns_of(rows, ["table", "source"]), args.format)
            else:
                for report in reports:
                    print_human_agreement(report)
            return 0
        table = correlation_table(store, metrics, n_boot=args.n_boot, seed=args.seed, value_keys=value_keys)
        agreement = annotator_agreement(store)
        judges = judge_accuracy_table(store)
        if args.format != "table":
            probe_rows = probe_detection_records(store, metrics, n_boot=args.n_boot, seed=args.seed)
            write_study_records(table, agreement, judges, probe_rows, args.format,
                                [row for r in reports for row in r.rows()])
            return 0
        probes = probe_detection_table(store, metrics)
    print("Correlation with human 1-5 ratings (5 = no hallucination; 95% CI, resampled by image)")
    if not table:
        print("  no response has both a human rating and a metric score yet")
    else:
        print(f"  {'metric':<12} {'value':<10} {'config':<17} {'n':>5}  {'pearson':<24} {'spearman':<24} "
              f"{'kendall':<24}")
        for r in table:
            cells = [with_interval(r[m], r[f"{m}_low"], r[f"{m}_high"]) for m in ("pearson", "spearman", "kendall")]
            print(f"  {r['metric']:<12} {r['value']:<10} {r['config_key']:<17} {int(r['n']):>5}  "
                  + " ".join(f"{c:<24}" for c in cells))
            print("  " + " " * 12 + " " + row_notes(r))
    print(f"Krippendorff's alpha ({agreement['level']}): {number(agreement['alpha'])} "
          f"({agreement['annotators']} annotators, {agreement['items_rated_twice']} of {agreement['items']} "
          "items rated by two or more)")
    if judges:
        print("Tri-HE judges against human triplet corrections")
        for name, acc in sorted(judges.items()):
            print(f"  {name:<40} n={acc.n:<5} accuracy {number(acc.accuracy)}  hallucinated-or-not "
                  f"{number(acc.binary_accuracy)}  kappa {number(acc.kappa)}")
    if probes:
        print("Probe detection (synthetic runs: injected hallucinations with known spans)")
        print(f"  {'metric':<12} {'config':<17} {'responses':>9} {'detected':>14} {'false alarms':>16} "
              f"{'spearman vs rate':>17}")
        for row in probes:
            print(f"  {row.metric:<12} {row.config_key:<17} {row.responses:>9} "
                  f"{number(row.detection_rate):>6} of {row.injected:<5} "
                  f"{number(row.false_alarm_rate):>6} of {row.stated:<7} {number(row.spearman_with_injected_share):>17}")
    for report in reports:
        print_human_agreement(report)
    return 0


def _imported_sources(store: Store, source: str | None) -> list[str]:
    """The imported studies to report: all (no ``--source``), none (``--source app``) or the one named."""
    from ..studies.human_sources import human_sources

    held = [s["source"] for s in human_sources(store)]
    if source is None:
        return held
    if source == APP_SOURCE:
        return []
    if source not in held:
        raise ValueError(unknown_name("judgement source", source, [APP_SOURCE, *held],
                                      listing="sources in the store"))
    return [source]


def print_human_agreement(report: Any) -> None:
    """An imported study's tables (``studies.human_sources.HumanAgreementReport``) for people to read."""
    print(f"Human judgements imported from {report.source} ({report.judged} responses judged; every score: "
          "higher = more hallucination; 95% CI, resampled by image)")
    if report.binary:
        print(f"  Finding the responses people call hallucinated ({report.binary[0]['human']}): AUROC "
              "(0.5 = chance) and AP (chance = prevalence)")
        print(f"  {'score':<22} {'config':<17} {'n':>5}  {'auroc':<22} {'ap':<22} {'prevalence':>10}")
        for r in report.binary:
            print(f"  {r['score']:<22} {r['config_key']:<17} {r['n']:>5}  "
                  f"{with_interval(r['auroc'], r['auroc_low'], r['auroc_high']):<22} {with_interval(r['ap'], r['ap_low'], r['ap_high']):<22} "
                  f"{number(r['prevalence']):>10}")
    for target in dict.fromkeys(r["human"] for r in report.rank):
        print(f"  Rank correlation with {target} (higher = less hallucination: agreeing scores correlate "
              "negatively)")
        print(f"  {'score':<22} {'config':<17} {'n':>5}  {'spearman':<24} {'kendall':<24}")
        for r in (r for r in report.rank if r["human"] == target):
            print(f"  {r['score']:<22} {r['config_key']:<17} {r['n']:>5}  "
                  f"{with_interval(r['spearman'], r['spearman_low'], r['spearman_high']):<24} "
                  f"{with_interval(r['kendall'], r['kendall_low'], r['kendall_high']):<24}")
    if report.spans:
        print("  Flagged spans against the spans people marked (precision: flagged spans overlapping a marked one; "
              "recall: marked spans overlapped)")
        print(f"  {'metric':<12} {'config':<17} {'responses':>9}  {'precision':<22} {'of flagged':>10}  "
              f"{'recall':<22} {'of marked':>9}")
        for r in report.spans:
            print(f"  {r['metric']:<12} {r['config_key']:<17} {r['responses']:>9}  "
                  f"{with_interval(r['precision'], r['precision_low'], r['precision_high']):<22} {r['flagged']:>10}  "
                  f"{with_interval(r['recall'], r['recall_low'], r['recall_high']):<22} {r['marked']:>9}")
        for note in report.span_notes:
            print(f"  note: {note}")
    if report.facts:
        print("  Judges on labelled facts (balanced accuracy on the facts each settles; the rest: coverage)")
        for r in report.facts:
            name = r["metric"] if r["judge"] == r["metric"] else f"{r['metric']} ({r['judge']})"
            print(f"  {name + '@' + r['config_key']:<36} {r['facts']} facts, settled "
                  f"{r['settled']}: coverage "
                  f"{with_interval(r['coverage'], r['coverage_low'], r['coverage_high'])}, balanced accuracy "
                  f"{with_interval(r['balanced_accuracy'], r['balanced_accuracy_low'], r['balanced_accuracy_high'])}")
    if report.groups:
        print("  Mean score by group")
        print(f"  {'score':<22} {'config':<17} {'group':<14} {'n':>5}  {'mean':<26}")
        for r in report.groups:
            print(f"  {r['score']:<22} {r['config_key']:<17} {r['group']:<14} {r['n']:>5}  "
                  f"{with_interval(r['mean'], r['mean_low'], r['mean_high']):<26}")
    for note in report.notes:
        print(f"  note: {note}")


def row_notes(row: dict[str, Any]) -> str:
    """Under a correlation row: its number's direction, what it left out and why, and a warning when its
    intervals rest on few images."""
    from ..studies.collect import MIN_IMAGES_FOR_INTERVAL, direction_note

    direction = direction_note(row["metric"], row["value"])
    agrees = {True: "agrees with people if negative", False: "agrees with people if positive"}.get(
        row.get("higher_is_worse"), "")
    left = "; ".join(f"{n} {why}" for why, n in (row.get("left_out") or {}).items()) or "none"
    text = f"{direction}, {agrees}; {int(row['n'])} of {int(row['rated'])} rated used; left out: {left}"
    if int(row["clusters"]) < MIN_IMAGES_FOR_INTERVAL:
        text += f"; WARNING: intervals from {int(row['clusters'])} images say little"
    return text


def write_study_records(correlations: list[dict[str, Any]], agreement: dict[str, Any], judges: dict[str, Any],
                        probes: list[dict[str, Any]], fmt: str, human: list[dict[str, Any]] = ()) -> None:
    """Every table of ``study`` as rows of one stream, each naming its ``table``.

    correlation: one row per metric, value and config; agreement: one row; judge_accuracy:
    one row per judge; probe_detection: one row per metric, config and hallucination type
    (``studies.collect.probe_detection_records``); then the imported studies' rows (``human_binary``,
    ``human_rank``, ``human_spans``, ``human_facts``, ``human_groups``, each with its ``source``:
    ``studies.human_sources.HumanAgreementReport.rows``).
    """
    rows: list[dict[str, Any]] = [{"table": "correlation", **r,
                                   "left_out": "; ".join(f"{n} {why}" for why, n in (r.get("left_out") or {}).items())}
                                  for r in correlations]
    rows.append({"table": "agreement", **agreement})
    rows += [{"table": "judge_accuracy", "judge": name, "n": acc.n, "accuracy": acc.accuracy,
              "binary_accuracy": acc.binary_accuracy, "kappa": acc.kappa} for name, acc in sorted(judges.items())]
    rows += [{"table": "probe_detection", **r} for r in probes]
    rows += list(human)
    write_records(rows, columns_of(rows, ["table"]), fmt)
