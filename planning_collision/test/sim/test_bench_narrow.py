"""bench/bench_narrow.py's --resume: a long sweep stopped part way (or run family by family
into one CSV) goes on from the rows its runs CSV holds, keeping them as they are, and tables
them all. Real runs of the cheapest scene (the intersection with 2 robots, ours)."""

from __future__ import annotations

import csv
import importlib
import time
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    module = importlib.import_module("bench_narrow")
    ran = []
    real = module.RUNNERS[module.OURS]

    def counted(scene, family, seed, label):
        ran.append((family, scene.size, seed))
        return real(scene, family, seed, label)

    monkeypatch.setitem(module.RUNNERS, module.OURS, counted)
    return module, ran


def rows(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_resume_runs_only_the_missing_seeds_and_keeps_the_rows_it_had(bench, tmp_path):
    module, ran = bench
    common = ["--families", "intersection", "--sizes", "2", "--no-navground", "--jobs", "1",
              "--output", str(tmp_path)]
    module.main(["--seeds", "1", *common])
    first = rows(tmp_path / "narrow_runs.csv")
    assert ran == [("intersection", 2, 0)] and len(first) == 2  # the header and seed 0

    module.main(["--seeds", "3", "--resume", *common])
    assert ran[1:] == [("intersection", 2, 1), ("intersection", 2, 2)]  # seed 0 not again
    second = rows(tmp_path / "narrow_runs.csv")
    assert second[:2] == first  # the header once, seed 0's row as it was (its wall time too)
    assert [row[2] for row in second[1:]] == ["0", "1", "2"]
    assert [o.seed for o in module.read_runs(tmp_path / "narrow_runs.csv")] == [0, 1, 2]
    table = (tmp_path / "narrow_table.txt").read_text()
    assert "| intersection | 2 | ours | 3 |" in table  # every row of the CSV, not only new
    assert "2 runs in" in table and "1 rows already in the CSV" in table

    module.main(["--seeds", "3", "--resume", *common])  # nothing left to run
    assert len(ran) == 3 and rows(tmp_path / "narrow_runs.csv") == second

    module.main(["--seeds", "1", *common])  # without --resume the CSV starts again
    assert len(ran) == 4 and len(rows(tmp_path / "narrow_runs.csv")) == 2


def test_no_ours_runs_only_navground_beside_the_rows_of_ours_already_held(bench, tmp_path,
                                                                         monkeypatch):
    """navground's rows do not depend on our controller: --no-ours runs them alone, and with
    --resume into a CSV that holds ours, the table has both."""
    module, ran = bench
    navground_ran = []
    try:  # a bench dependency, not in every venv (Jazzy's); the switch is what is tested
        import navground.sim  # noqa: F401

        real = module.RUNNERS[module.NAVGROUND]
    except ImportError:
        real = module.run_ours  # not the fixture's counted one

    def counted(scene, family, seed, label):
        navground_ran.append((family, scene.size, seed))
        return real(scene, family, seed, label)

    monkeypatch.setitem(module.RUNNERS, module.NAVGROUND, counted)
    common = ["--families", "intersection", "--sizes", "2", "--jobs", "1",
              "--output", str(tmp_path)]
    module.main(["--seeds", "2", "--no-navground", *common])
    assert len(ran) == 2 and navground_ran == []

    module.main(["--seeds", "2", "--no-ours", "--resume", *common])
    assert len(ran) == 2  # ours not run again, nor run for the seeds it lacks
    assert navground_ran == [("intersection", 2, 0), ("intersection", 2, 1)]
    held = [(o.controller, o.seed) for o in module.read_runs(tmp_path / "narrow_runs.csv")]
    assert held == [(module.OURS, 0), (module.OURS, 1),
                    (module.NAVGROUND, 0), (module.NAVGROUND, 1)]
    table = (tmp_path / "narrow_table.txt").read_text()
    assert "| intersection | 2 | ours | 2 |" in table
    assert "| intersection | 2 | navground ORCA | 2 |" in table


def test_no_ours_with_no_navground_is_refused_before_running_anything(bench, tmp_path,
                                                                      capsys):
    module, ran = bench
    with pytest.raises(SystemExit) as refused:
        module.main(["--no-ours", "--no-navground", "--output", str(tmp_path)])
    assert refused.value.code == 2 and ran == []
    assert "--no-ours and --no-navground" in capsys.readouterr().err
    assert not (tmp_path / "narrow_runs.csv").exists()


def test_each_row_names_the_tree_it_measured_and_old_csvs_resume_in_their_columns(bench,
                                                                                  tmp_path):
    """Rows of one CSV can come from several invocations on several trees: each row says
    which (the commit, when its invocation started), and a CSV written before those columns
    goes on in its own columns."""
    module, ran = bench
    common = ["--families", "intersection", "--sizes", "2", "--no-navground", "--jobs", "1",
              "--output", str(tmp_path)]
    module.main(["--seeds", "1", *common])
    header, row = rows(tmp_path / "narrow_runs.csv")
    assert header[-2:] == ["tree", "started"]
    assert row[-2] == module.tree_id() and row[-2].split("+")[0] in module.source_version()
    assert time.strptime(row[-1], "%Y-%m-%dT%H:%M:%SZ")
    table = (tmp_path / "narrow_table.txt").read_text()
    assert f"- intersection 2 ours: {row[-2]} from {row[-1]} (1)" in table

    # the CSV as an older bench wrote it: without the two columns
    old = [header[:-2], row[:-2]]
    with open(tmp_path / "narrow_runs.csv", "w", newline="") as f:
        csv.writer(f).writerows(old)
    module.main(["--seeds", "2", "--resume", *common])
    assert ran[1:] == [("intersection", 2, 1)]
    written = rows(tmp_path / "narrow_runs.csv")
    assert written[:2] == old and len(written[2]) == len(old[0])  # its own columns
    assert [(o.seed, o.tree) for o in module.read_runs(tmp_path / "narrow_runs.csv")] == \
        [(0, ""), (1, "")]
    table = (tmp_path / "narrow_table.txt").read_text()  # this invocation knows its tree
    assert f"- intersection 2 ours: {module.tree_id()} from " in table
    assert "; tree not recorded (1)" in table


def test_summarize_tables_and_plots_a_gathered_csv_as_a_run_does(bench, tmp_path, capsys):
    """A consolidated CSV (rows gathered from several runs) gets the table and the plot a
    run would have written; --plot alone is refused."""
    module, ran = bench
    module.main(["--families", "intersection", "--sizes", "2", "--no-navground", "--jobs",
                 "1", "--seeds", "2", "--output", str(tmp_path)])
    written = (tmp_path / "narrow_table.txt").read_text()
    (tmp_path / "narrow.png").unlink()
    capsys.readouterr()
    status = module.main(["--summarize", str(tmp_path / "narrow_runs.csv"),
                          "--plot", str(tmp_path / "gathered.png")])
    printed = capsys.readouterr().out

    def rows_of(text):
        return [line for line in text.splitlines() if line.startswith("| intersection")]

    assert len(rows_of(written)) == 1 and rows_of(printed) == rows_of(written)
    assert status == 0 and "Measured on (runs):" in printed
    png = (tmp_path / "gathered.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000
    assert len(ran) == 2  # summarizing runs nothing

    with pytest.raises(SystemExit):
        module.main(["--plot", str(tmp_path / "alone.png"), "--output", str(tmp_path)])
    assert len(ran) == 2 and not (tmp_path / "alone.png").exists()
