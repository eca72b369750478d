"""The corpus of row shapes (tests/shapes): every expert's reading holds over MCP, default tools.

The shapes are written fresh by tests/shapes/make_shapes.py (real systems' code where it runs
here, their documented formats otherwise); readings.py says what an expert concludes from each,
written before the route was run on them; runner.py calls the server and checks each reading.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "shapes"))

import runner  # noqa: E402
from readings import READINGS  # noqa: E402


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return {r["shape"]: r for r in runner.run_all(tmp_path_factory.mktemp("shapes"))}


def test_the_corpus_has_twenty_shapes_or_more():
    assert len({r["shape"] for r in READINGS}) >= 20


@pytest.mark.parametrize("shape", [r["shape"] for r in READINGS])
def test_the_experts_reading_holds(results, shape):
    got = results[shape]
    assert got["passes"], f"{shape}: {'; '.join(got['fails'])} (answer: {got['answer']})"


def test_the_docs_table_lists_every_shape_with_its_answer_before_and_after():
    table = (Path(__file__).resolve().parents[1] / "docs" / "shapes.md").read_text()
    for reading in READINGS:
        row = next((line for line in table.splitlines()
                    if line.startswith(f"| {reading['shape']} |")), None)
        assert row is not None, reading["shape"]
        assert reading["reading"] in row and row.rstrip().endswith("|")
        assert "| holds: " in row, row        # every reading holds in the tree documented
