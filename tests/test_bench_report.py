"""bench/report.py's plot and its reading back of the results table (synthetic data).

The plot must keep small differences visible beside large ones: the
primes panel holds 2.2 and 4.4 req/s beside Go's 110, which on a linear
axis are two slivers of the same size.

matplotlib comes with the ``bench`` extra, which ``make`` installs into
both test venvs (``pip install -e '.[test,bench]'`` by hand).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import report

ROWS = [("stock Tornado, CPython 3.11.7", "stock", 2.8), ("tornado-stm, 1 thread", "stm", 2.2),
        ("tornado-stm, 2 threads", "stm", 4.4), ("Go net/http, same algorithm", "go", 110.7)]


def synthetic_results() -> dict:
    rows = [{"workload": "primes", "label": label, "family": family, "status": "ok",
             "key": ("stock-" if family == "stock" else "") + label, "interpreter": "gil",
             "requests_per_second": rate, "p50_ms": 100.0, "p99_ms": 200.0}
            for label, family, rate in ROWS]
    rows.append({"workload": "astar", "label": "Tornado, 2 processes", "family": "processes",
                 "key": "processes", "status": "not available", "reason": "shared state",
                 "requests_per_second": None})
    rows.append({"workload": "astar", "label": "stock Tornado, CPython 3.11.7", "family": "stock",
                 "key": "stock-astar", "status": "ok", "interpreter": "gil",
                 "requests_per_second": 1111.5, "p50_ms": 11.1, "p99_ms": 37.5})
    return {"date": "2026-01-01 00:00 UTC", "command": "make bench", "seconds": 60.0,
            "machine": {"cores": 2, "cpu": "Test CPU @ 1GHz", "memory": "1 GiB",
                        "system": "Linux 6"},
            "loads": {"primes": "siege -c 50", "astar": "bench_astar: 16 players"},
            "rows": report.with_ratios(rows)}


def test_markdown_reads_back_into_the_same_figures() -> None:
    results = synthetic_results()
    back = report.results_from_markdown(report.markdown(results))
    assert back["machine"] == results["machine"] and back["loads"] == results["loads"]
    assert [(r["workload"], r["label"], r["family"], r["status"], r["requests_per_second"])
            for r in back["rows"]] == [
        (r["workload"], r["label"], r["family"], r["status"], r["requests_per_second"])
        for r in results["rows"]]
    assert back["rows"][2]["ratio_to_stock_gil"] == pytest.approx(4.4 / 2.8, abs=0.01)
    with pytest.raises(ValueError):
        report.results_from_markdown("# no table here\n")


def test_plot_uses_a_log_axis_so_a_doubling_shows_beside_110(tmp_path: Path) -> None:
    results = synthetic_results()
    fig = report.figure(results)
    primes = fig.axes[0]
    assert len(fig.axes) == 2 and all(ax.get_xscale() == "log" for ax in fig.axes)
    bars = {p.get_y(): p for p in primes.patches}
    ends = sorted(primes.transData.transform((bar.get_x() + bar.get_width(), 0))[0]
                  for bar in bars.values())
    start = primes.transData.transform((primes.get_xlim()[0], 0))[0]
    lengths = [end - start for end in ends]          # 2.2, 2.8, 4.4, 110.7 in pixels
    assert lengths[2] - lengths[0] > 0.1 * (lengths[3] - lengths[0])
    assert lengths[2] > 1.5 * lengths[0]
    out = tmp_path / "plot.png"
    report.plot(results, str(out))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_figure_title_overlaps_no_panel() -> None:
    """The title once sat on the first panel's own title (tight_layout ignores a
    suptitle): on a figure as tall as a whole run's, every workload drawn."""
    results = synthetic_results()
    results["rows"] = report.with_ratios([dict(row, workload=workload)
                                          for workload in report.WORKLOAD_TITLES
                                          for row in results["rows"]])
    results["loads"] = {workload: f"the {workload} load" for workload in report.WORKLOAD_TITLES}
    fig = report.figure(results)
    assert len(fig.axes) == len(report.WORKLOAD_TITLES)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    title = fig.get_suptitle()
    assert title
    title_box = fig._suptitle.get_window_extent(renderer)
    for ax in fig.axes:
        # The panel with its own title and tick labels, not only the plotting area.
        for box in (ax.get_window_extent(renderer), ax.get_tightbbox(renderer)):
            assert not title_box.overlaps(box), (title, ax.get_title(loc="left"))


def test_replot_command_reads_the_docs_page(tmp_path: Path) -> None:
    page = tmp_path / "benchmarks.md"
    page.write_text(f"intro\n{report.BEGIN}\n{report.markdown(synthetic_results())}\n"
                    f"{report.END}\n")
    out = tmp_path / "out.png"
    assert report.main(["--page", str(page), "-o", str(out)]) == 0
    assert out.stat().st_size > 10_000
    with pytest.raises(SystemExit) as exit_info:
        report.main(["--page", str(tmp_path / "missing.md"), "-o", str(out)])
    assert exit_info.value.code == 2


def test_replot_command_reads_a_results_json(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    results.write_text(json.dumps(synthetic_results()))
    out = tmp_path / "out.png"
    assert report.main(["--results", str(results), "-o", str(out)]) == 0
    assert out.stat().st_size > 10_000
    results.write_text("{not json")
    with pytest.raises(SystemExit) as exit_info:
        report.main(["--results", str(results), "-o", str(out)])
    assert exit_info.value.code == 2


def test_every_workload_has_a_title() -> None:
    from bench.configs import WORKLOADS

    assert list(report.WORKLOAD_TITLES) == list(WORKLOADS)
