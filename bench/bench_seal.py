"""What the server's seal costs at start: `whileai-mcp` cold start with secret-looking variables
in its environment (it starts itself again without them: ``whileai_core.seal``) against the
same secrets with the re-exec skipped (the baseline: ``WHILEAI_SECRETS_FD`` already set to a
non-number, which the seal reads as "already re-exec'd, nothing to restore"), and a start with no
secret at all, in one run.

    .venv/bin/python bench/bench_seal.py [--starts 9]

Cold start is spawn -> initialize -> first tools/list answered (``bench_server.cold_start``),
alternating the two so machine load hits both alike. Prints both medians and their ratio. The
re-exec runs the interpreter's start and the argument parsing twice, before any heavy import.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_server import cold_start  # noqa: E402 - the one way to time a start

FAKE = {"OPENAI_API_KEY": "sk-bench-not-a-key-000000", "MODAL_TOKEN_ID": "ak-bench-000000",
        "MODAL_TOKEN_SECRET": "as-bench-000000", "HF_TOKEN": "hf_bench_000000"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--starts", type=int, default=9)
    args = parser.parse_args(argv)
    cmd = [str(Path(sys.executable).with_name("whileai-mcp"))]
    clean = {k: v for k, v in os.environ.items() if not any(
        w in k.upper() for w in ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"))}
    plain, unsealed, sealed = [], [], []
    saved = dict(os.environ)
    try:
        for _ in range(args.starts):
            os.environ.clear()
            os.environ.update(clean)
            plain.append(cold_start(cmd))
            os.environ.update(FAKE)
            sealed.append(cold_start(cmd))
            os.environ["WHILEAI_SECRETS_FD"] = "bench-skip"
            unsealed.append(cold_start(cmd))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    a, u, b = (statistics.median(x) for x in (plain, unsealed, sealed))
    print(f"cold start, no secret:                 median {a:.3f} s (min {min(plain):.3f})")
    print(f"cold start, 4 secrets, re-exec skipped: median {u:.3f} s (min {min(unsealed):.3f})")
    print(f"cold start, 4 secrets, sealed:          median {b:.3f} s (min {min(sealed):.3f})")
    print(f"ratio sealed / re-exec skipped: {b / u:.2f}x; sealed / no secret: {b / a:.2f}x "
          f"({args.starts} starts each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
