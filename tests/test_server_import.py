"""import_rows through the protocol: real fixtures copied into the workspace (see
tests/fixtures/*/make_*.py); expected numbers hand-derived in tests/test_importers.py's tables."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_server_support import call, error_text, ok

FIX = Path(__file__).resolve().parent / "fixtures"


def test_import_rows_writes_the_file_and_answers_bounded(server, ws):
    shutil.copytree(FIX / "prime_rl" / "volume" / "e2e-grpo" / "fc-grpo-new", ws / "run")
    out = ok(call(server, "import_rows", {"path": "run", "out": "rows.jsonl", "step": "last"}))
    # step 20 of the grpo arm: 1, .75, 1 scored; the provider error counted, not written
    assert (out["n_rows"], out["errored"], out["out"], out["source"]) == (3, 1, "rows.jsonl", "run")
    assert out["files"] == ["run/rollouts/step_0/eval/all/traces.jsonl",
                            "run/rollouts/step_20/eval/all/traces.jsonl"]
    assert out["by_step"][0]["policy_versions"] == [19] and len(out["preview"]) == 3
    rows = [json.loads(x) for x in (ws / "rows.jsonl").read_text().splitlines()]
    assert sorted(r["reward"] for r in rows) == [0.75, 1.0, 1.0]
    passed = ok(call(server, "rate", {"rows": "rows.jsonl"}))
    assert abs(passed["rate"]["value"] - 2 / 3) < 1e-12
    again = error_text(call(server, "import_rows", {"path": "run", "out": "rows.jsonl"}),
                       "import_rows")
    assert "already exists" in again and "overwrite" in again


def test_import_rows_inspect_metric_and_refusals(server, ws):
    shutil.copyfile(FIX / "inspect" / "logs" / "canned_qa.eval", ws / "qa.eval")
    text = error_text(call(server, "import_rows", {"path": "qa.eval", "out": "r.jsonl"}),
                      "import_rows")
    assert "3 scorers (closeness, match, words)" in text and not (ws / "r.jsonl").exists()
    out = ok(call(server, "import_rows", {"path": "qa.eval", "out": "r.jsonl",
                                          "scorer": "match"}))
    assert (out["format"], out["n_rows"], out["errored"]) == ("inspect", 7, 1)
    outside = error_text(call(server, "import_rows", {"path": "../qa.eval", "out": "x.jsonl"}),
                         "import_rows")
    assert "contains '..'" in outside
    bad_step = error_text(call(server, "import_rows", {"path": "qa.eval", "out": "y.jsonl",
                                                       "step": -1}), "import_rows")
    assert "step" in bad_step
    wrong = error_text(call(server, "import_rows", {"path": "qa.eval", "out": "z.jsonl",
                                                    "step": 3}), "import_rows")
    assert "`step`, `kind` and `agent` apply to prime-rl" in wrong
