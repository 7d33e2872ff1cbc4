"""The benchmark's results as people read them: a markdown table and a PNG plot.

``write_all`` writes ``results.json``, ``results.md`` and ``results.png``;
``update_docs`` puts the table and the plot into docs/benchmarks.md between
its ``results`` markers, leaving the hand-written text around them alone.

The plot has one panel per workload with a logarithmic req/s axis: peers
differ by up to 50x (Go's 110 req/s beside Python's 2 to 5), and on a log
axis a doubling is the same length everywhere, so 2.2 vs 4.4 stays visible.

``python -m bench.report`` re-draws docs/benchmarks.png from the table in
docs/benchmarks.md (:func:`results_from_markdown` reads it back), or from a
run's ``results.json`` (``--results bench/results/latest/results.json``), for
when only the plotting changed.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import shutil
from typing import Any

from testsupport.serverproc import REPO_ROOT

log = logging.getLogger(__name__)

DOCS_PAGE = os.path.join(REPO_ROOT, "docs", "benchmarks.md")
DOCS_PLOT = os.path.join(REPO_ROOT, "docs", "benchmarks.png")
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"

WORKLOAD_TITLES = {
    "primes": "Primes (CPU-bound, no shared state)",
    "astar": "A-star game (shared map, rules checked)",
    "astar2014": "A-star, 2014 style (long searches on a 200x200 shared map, rules checked)",
    "hello": "Hello world (the loop's own cost)",
    "mixed": "Hello world behind slow primes requests (pipelining)",
    "async": "async def handlers (await a timer, then compute)",
}
FAMILY_COLOURS = {"stock": "#7f7f7f", "processes": "#bcbd22", "stm": "#1f77b4", "go": "#2ca02c"}


def with_ratios(rows: list[dict]) -> list[dict]:
    """Adds req/s ratios to stock Tornado on the same workload.

    ``ratio_to_stock_gil``: over stock Tornado on the GIL build (the table's
    reference); ``ratio_to_stock_same``: over stock Tornado on the row's own
    interpreter (what tornado-stm adds to the interpreter it runs on).
    """
    stock = {(r["workload"], r["interpreter"]): r.get("requests_per_second") for r in rows
             if r["key"].startswith("stock-") and r.get("status") == "ok"}

    def ratio(rate: float | None, reference: float | None) -> float | None:
        return round(rate / reference, 2) if rate and reference else None

    for r in rows:
        rate = r.get("requests_per_second") if r.get("status") == "ok" else None
        r["ratio_to_stock_gil"] = ratio(rate, stock.get((r["workload"], "gil")))
        r["ratio_to_stock_same"] = ratio(rate, stock.get((r["workload"], r.get("interpreter"))))
    return rows


def number(value: Any, digits: int = 1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}"


def times(ratio: float | None) -> str:
    return "–" if ratio is None else f"{ratio:.2f}x"


def one_line(row: dict) -> str:
    if row.get("status") != "ok" and row.get("status") != "violations":
        return f"{row.get('status')}: {str(row.get('reason', '')).splitlines()[0] if row.get('reason') else ''}"
    text = (f"{number(row.get('requests_per_second'), 2)} req/s, p50 "
            f"{number(row.get('p50_ms'))} ms, p99 {number(row.get('p99_ms'))} ms")
    if row.get("failures"):
        text += f", {row['failures']} failed requests"
    if row.get("violations"):
        text += f", {row['violations']} RULE VIOLATIONS"
    stm = row.get("stm")
    if stm:
        text += f"; aborts {number(stm.get('aborts'))}, inevitable {number(stm.get('inevitable'))}"
    return text


def notes(row: dict) -> str:
    parts = []
    if row.get("status") not in ("ok", "violations"):
        parts.append(f"{row.get('status')}: {str(row.get('reason', '')).splitlines()[0]}")
    if row.get("violations"):
        parts.append(f"**{row['violations']} rule violations**")
    if row.get("failures"):
        parts.append(f"{row['failures']} failed requests")
    background = row.get("background")
    if background:
        parts.append(f"primes meanwhile: {number(background.get('requests_per_second'), 2)} "
                     f"req/s, p99 {number(background.get('p99_ms'), 0)} ms")
    if row.get("rounds_requests_per_second"):
        parts.append("median of " + ", ".join(
            number(v, 1) for v in row["rounds_requests_per_second"]) + " req/s")
    if row.get("backend") and row.get("family") == "stm":
        parts.append(f"backend: {row['backend']}")
    stm = row.get("stm") or {}
    if stm.get("note"):
        parts.append(stm["note"])
    if stm.get("top_conflict"):
        parts.append(f"top conflict: {stm['top_conflict']}")
    return "; ".join(parts).replace("|", "\\|")


def markdown(results: dict) -> str:
    machine = results["machine"]
    lines = [f"Run {results['date']} with `{results['command']}` "
             f"({results['seconds']:.0f} s) on {machine['cores']} cores, {machine['cpu']}, "
             f"{machine['memory']}, {machine['system']}.", ""]
    for workload, title in WORKLOAD_TITLES.items():
        rows = [r for r in results["rows"] if r["workload"] == workload]
        if not rows:
            continue
        lines += [f"### {title}", "", f"Load: {results['loads'][workload]}.", "",
                  "| configuration | req/s | p50 ms | p99 ms | × stock GIL | "
                  "× stock, same interpreter | aborts | inevitable | notes |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
        for r in rows:
            stm = r.get("stm") or {}
            lines.append(
                f"| {r['label']} | {number(r.get('requests_per_second'), 1)} | "
                f"{number(r.get('p50_ms'))} | {number(r.get('p99_ms'))} | "
                f"{times(r.get('ratio_to_stock_gil'))} | {times(r.get('ratio_to_stock_same'))} | "
                f"{number(stm.get('aborts'))} | {number(stm.get('inevitable'))} | {notes(r)} |")
        lines.append("")
    return "\n".join(lines)


def _log_limits(values: list[float]) -> tuple[float, float]:
    """x limits of a log axis: from the decade below the smallest value to room for labels."""
    positive = [v for v in values if v > 0] or [1.0]
    low = 10.0 ** math.floor(math.log10(min(positive)))
    high = 10.0 ** (math.log10(max(positive)) + 0.6)   # labels fit right of the longest bar
    return low, max(high, low * 10)


def figure(results: dict) -> Any:
    """Horizontal bars of req/s, one panel per workload, log axis, coloured by family."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogLocator

    workloads = [w for w in WORKLOAD_TITLES if any(r["workload"] == w for r in results["rows"])]
    heights = [max(1, sum(1 for r in results["rows"] if r["workload"] == w)) for w in workloads]
    # The constrained layout keeps room for the figure's title above the first
    # panel's own (tight_layout ignores a suptitle and overlapped them).
    fig, axes = plt.subplots(len(workloads), 1, figsize=(10, 1.2 + 0.6 * sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False,
                             layout="constrained")
    for ax, workload in zip(axes[:, 0], workloads):
        rows = [r for r in results["rows"] if r["workload"] == workload][::-1]
        values = [r.get("requests_per_second") or 0 for r in rows]
        low, high = _log_limits(values)
        ax.set_xscale("log")
        bars = ax.barh(range(len(rows)), [v - low if v > low else 0 for v in values], left=low,
                       color=[FAMILY_COLOURS.get(r["family"], "#999999") for r in rows])
        ax.set_xlim(low, high)
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_minor_locator(LogLocator(base=10, subs=tuple(range(1, 10))))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.10g}"))
        ax.grid(axis="x", which="major", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
        ax.set_yticks(range(len(rows)), [r["label"] for r in rows], fontsize=8)
        ax.set_title(f"{WORKLOAD_TITLES[workload]}\n{results['loads'][workload]}", fontsize=9,
                     loc="left")
        ax.set_xlabel("requests per second, log scale (higher is better)", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        for bar, r, value in zip(bars, rows, values):
            if r.get("status") == "ok":
                ratio = r.get("ratio_to_stock_gil")
                text = f" {r['requests_per_second']:,.1f}" + (f"  ({ratio:.2f}x)" if ratio else "")
            else:
                text = f" {r.get('status')}"
            ax.text(max(value, low), bar.get_y() + bar.get_height() / 2, text, va="center",
                    fontsize=7)
    fig.suptitle(f"tornado-stm benchmarks, {results['date']}, {results['machine']['cores']} cores",
                 fontsize=10)
    return fig


def plot(results: dict, path: str) -> None:
    """The PNG of :func:`figure` at ``path``."""
    import matplotlib.pyplot as plt

    fig = figure(results)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_all(results: dict, out_dir: str) -> dict[str, str]:
    """Writes results.json, results.md and (with matplotlib) results.png."""
    paths = {kind: os.path.join(out_dir, f"results.{kind}") for kind in ("json", "md", "png")}
    with open(paths["json"], "w") as f:
        json.dump(results, f, indent=2)
    with open(paths["md"], "w") as f:
        f.write(markdown(results))
    try:
        plot(results, paths["png"])
    except ImportError:
        log.warning("no PNG plot: matplotlib is missing (pip install -e '.[bench]', "
                    "which `make bench` does)")
        del paths["png"]
    return paths


def update_docs(results: dict, png_path: str | None) -> None:
    """Replace the generated part of docs/benchmarks.md and its plot."""
    if png_path:
        shutil.copyfile(png_path, DOCS_PLOT)
    block = f"{BEGIN}\n{markdown(results)}\n![req/s by configuration](benchmarks.png)\n{END}"
    with open(DOCS_PAGE) as f:
        page = f.read()
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{DOCS_PAGE} lacks the {BEGIN} ... {END} markers")
    head, rest = page.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(DOCS_PAGE, "w") as f:
        f.write(head + block + tail)


_RUN_LINE = re.compile(r"Run (?P<date>.+?) with `(?P<command>[^`]*)` \((?P<seconds>[0-9.]+) s\) on "
                       r"(?P<cores>\d+) cores, (?P<cpu>.+), (?P<memory>[^,]+), "
                       r"(?P<system>[^,]+)\.$")


def _cell_number(text: str) -> float | None:
    text = text.strip().rstrip("x")
    return None if text in ("–", "") else float(text.replace(",", ""))


def _family(label: str) -> str:
    for prefix, family in (("stock", "stock"), ("tornado-stm", "stm"), ("Go", "go")):
        if label.startswith(prefix):
            return family
    return "processes" if "processes" in label else "other"


def results_from_markdown(page: str) -> dict:
    """The results (as much as :func:`figure` draws) read back from :func:`markdown`'s text.

    ``page`` is docs/benchmarks.md or results.md; raises ValueError when it
    holds no results table.
    """
    if BEGIN in page:
        page = page.split(BEGIN, 1)[1].split(END, 1)[0]
    titles = {title: workload for workload, title in WORKLOAD_TITLES.items()}
    results: dict = {"rows": [], "loads": {}}
    workload = None
    for line in page.splitlines():
        run = _RUN_LINE.match(line.strip())
        if run:
            results.update(date=run["date"], command=run["command"],
                           seconds=float(run["seconds"]),
                           machine={"cores": int(run["cores"]), "cpu": run["cpu"],
                                    "memory": run["memory"], "system": run["system"]})
        elif line.startswith("### "):
            workload = titles.get(line[4:].strip())
        elif line.startswith("Load: ") and workload:
            results["loads"][workload] = line[len("Load: "):].rstrip(".")
        elif line.startswith("| ") and workload and not line.startswith("| configuration"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            label, rate, p50, p99, to_gil, to_same = cells[:6]
            note = cells[8] if len(cells) > 8 else ""
            requests = _cell_number(rate)
            results["rows"].append({
                "workload": workload, "label": label, "family": _family(label),
                "key": ("stock-" if label.startswith("stock") else "") + label,
                "status": "ok" if requests is not None else (note.split(":")[0] or "failed"),
                "requests_per_second": requests, "p50_ms": _cell_number(p50),
                "p99_ms": _cell_number(p99), "ratio_to_stock_gil": _cell_number(to_gil),
                "ratio_to_stock_same": _cell_number(to_same)})
    if not results["rows"] or "date" not in results:
        raise ValueError("no benchmark results table found")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.report",
        description="Re-draw the benchmark plot from the results table in docs/benchmarks.md, "
        "or from a run's results.json.")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--page", default=DOCS_PAGE, help="the markdown page holding the table "
                                                          "(default docs/benchmarks.md)")
    source.add_argument("--results", metavar="JSON", default=None,
                        help="a run's results.json instead (bench/results/latest/results.json)")
    parser.add_argument("-o", "--output", default=DOCS_PLOT,
                        help="the PNG to write (default docs/benchmarks.png)")
    args = parser.parse_args(argv)
    source_path = args.results or args.page
    try:
        with open(source_path, encoding="utf-8") as f:
            results = json.load(f) if args.results else results_from_markdown(f.read())
    except (OSError, ValueError) as exc:   # json.JSONDecodeError is a ValueError
        parser.exit(2, f"{parser.prog}: error: {source_path}: {exc}\n")
    plot(results, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
