"""Validate TOMLs with prime-rl's own loader: ``cli(RLConfig, args=["@", path])``, the call
prime-rl's tests/unit/test_configs.py makes.

Usage (with a Python 3.12 environment where prime-rl-configs 559b447 and its dependencies
(prime-pydantic-config, renderers, verifiers, and the taskset packages such as reverse_text and
kuhn_poker) import; never this project's .venv)::

    /tmp/prlvenv/bin/python bench/check_prime_rl_schema.py /tmp/prime-rl [FILE.toml ...]

How the environment used for the README's numbers was made (Python 3.12; the checkouts come from
``git worktree``/``checkout`` of prime-rl at 559b447 and verifiers at a60a606, never committed
here)::

    python3.12 -m venv /tmp/prlvenv
    /tmp/prlvenv/bin/pip install "prime-pydantic-config[toml]==0.4.3" "renderers>=0.1.9,<0.1.12"
    SETUPTOOLS_SCM_PRETEND_VERSION=0.3.0.dev62 /tmp/prlvenv/bin/pip install /tmp/verifiers
    /tmp/prlvenv/bin/pip install --no-deps /tmp/prime-rl/packages/prime-rl-configs \
        /tmp/verifiers/environments/reverse_text /tmp/verifiers/environments/kuhn_poker

With no files it checks every ``tests/golden/prime_rl/*.toml``. Prints ``accepted`` or
``rejected: <prime-rl's message>`` per file and exits 1 when any file is rejected.

``--agree`` (before the checkout path) also runs whileai's own ``validate_config`` on each file
and exits 1 when the two verdicts differ (use it on a mix of good and bad configs).
``--show KEY,KEY`` (before the checkout path) prints, for each accepted file, the value prime-rl's
loader resolved for each dotted key (``weight_broadcast.type``, ``inference.vllm.seed``...), after
its own defaults and validators: what ``rl`` will run, not what the file says.
The checkout path is put on sys.path only when ``prime_rl.configs`` does not import already.
"""

from __future__ import annotations

import contextlib
import io
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_rl_config(checkout: Path):
    try:
        from prime_rl.configs.rl import RLConfig
    except ImportError:
        sys.path.insert(0, str(checkout / "packages" / "prime-rl-configs" / "src"))
        from prime_rl.configs.rl import RLConfig
    from pydantic_config import cli
    return RLConfig, cli


def load(path: Path, RLConfig, cli):
    """(config, "") when prime-rl's loader accepts ``path``, else (None, its message)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = cli(RLConfig, args=["@", str(path)])
    except SystemExit as exc:  # pydantic_config prints the validation errors and exits
        text = (err.getvalue() + out.getvalue()).strip() or f"exit {exc.code}"
        return None, " | ".join(line.strip() for line in text.splitlines() if line.strip())[:2000]
    except Exception as exc:  # noqa: BLE001 - any loader failure is a rejection to report
        return None, f"{type(exc).__name__}: {exc}"
    return config, ""


def check(path: Path, RLConfig, cli) -> tuple[bool, str]:
    config, why = load(path, RLConfig, cli)
    return config is not None, why


def resolved(config, dotted: str):
    """The loaded config's value at ``dotted`` (None where a table on the way is None)."""
    value = config
    for part in dotted.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def main(argv: list[str]) -> int:
    agree = bool(argv) and argv[0] == "--agree"
    argv = argv[1:] if agree else argv
    show: list[str] = []
    if len(argv) >= 2 and argv[0] == "--show":
        show, argv = argv[1].split(","), argv[2:]
    if not argv:
        print(__doc__)
        return 2
    checkout = Path(argv[0])
    files = [Path(a) for a in argv[1:]] or sorted((ROOT / "tests" / "golden" / "prime_rl").glob("*.toml"))
    RLConfig, cli = load_rl_config(checkout)
    ours = None
    if agree:
        sys.path.insert(0, str(ROOT))
        from whileai_core.prime_rl import validate_config
        ours = validate_config
    rejected = differ = 0
    for path in files:
        config, why = load(path, RLConfig, cli)
        ok = config is not None
        rejected += not ok
        line = f"{path.name}: {'accepted' if ok else 'rejected: ' + why}"
        if ok and show:
            line += " " + " ".join(f"{key}={resolved(config, key)}" for key in show)
        if ours is not None:
            mine = ours(path)
            same = mine.ok == ok
            differ += not same
            line += f"  || whileai: {'accepted' if mine.ok else 'rejected'}"
            line += "" if same else "  <-- DISAGREE " + "; ".join(mine.errors)
        print(line)
    print(f"{len(files) - rejected}/{len(files)} accepted by prime-rl's RLConfig ({checkout})")
    if ours is not None:
        print(f"whileai's validate_config agrees on {len(files) - differ}/{len(files)}")
        return 1 if differ else 0
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
