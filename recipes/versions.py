"""The versions the TRL recipes are written for, and whether the installed ones fit together.

From the installed packages' own metadata: does each pinned package match ``PINS``, and does
every requirement one of ``TOGETHER`` states on another hold (TRL's ``vllm`` extra only once vLLM
is there). ``recipes/preflight.py`` shows the answer as its first row.
"""

from __future__ import annotations

# TRL 1.16 needs vLLM <= 0.31 and transformers < 5.18
PINS = {"trl": ("==", "1.16"), "transformers": ("<", "5.18"), "vllm": ("<=", "0.31")}
# What to pip install for a pin that misses; the vLLM range is TRL 1.16's own `vllm` extra.
PIN_FIX = {"trl": "'trl==1.16.*'", "transformers": "'transformers<5.18'",
           "vllm": "'vllm>=0.22.0,<=0.31.0'"}
# The packages whose versions must agree with each other (their metadata's requirements).
TOGETHER = ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "vllm",
            "huggingface-hub", "tokenizers")


def installed(package: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _requires(package: str) -> list[str]:
    from importlib.metadata import PackageNotFoundError, requires

    try:
        return requires(package) or []
    except PackageNotFoundError:
        return []


def requirement_misses() -> list[str]:
    """Each requirement one installed package of ``TOGETHER`` states on another that is not met
    ("vllm 0.31.0 needs torch==2.10.0, found 2.11.0"); of the extras, only TRL's ``vllm``."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    wanted = {canonicalize_name(p) for p in TOGETHER}
    misses = []
    for package in TOGETHER:
        have = installed(package)
        if have is None:
            continue
        for line in _requires(package):
            req = Requirement(line)
            name = canonicalize_name(req.name)
            if name not in wanted:
                continue
            extra = "vllm" if package == "trl" and name == "vllm" else ""
            if req.marker is not None and not req.marker.evaluate({"extra": extra}):
                continue
            found = installed(req.name)
            if found is None:
                if not extra:
                    misses.append(f"{package} {have} needs {req.name}{req.specifier}, not "
                                  "installed")
                continue
            if not req.specifier.contains(found, prereleases=True):
                misses.append(f"{package} {have} needs {req.name}{req.specifier}, found {found}")
    return misses


def pinned(have: str, op: str, want: str) -> bool:
    """``have`` against a major.minor pin (``==1.16`` matches 1.16.x)."""
    def mm(text: str) -> tuple[int, int]:
        parts = [int("".join(c for c in p if c.isdigit()) or 0) for p in text.split(".")[:2]]
        return parts[0], parts[1] if len(parts) > 1 else 0

    h, w = mm(have), mm(want)
    return {"==": h == w, "<": h < w, "<=": h <= w}[op]


def check() -> str:
    """The preflight's versions row, or an ``AssertionError`` naming each miss and a pip fix."""
    found, wrong, fixes = [], [], []
    for package in ("torch", "transformers", "trl", "peft", "accelerate", "datasets", "vllm"):
        have = installed(package)
        if have is None:
            if package == "vllm":  # optional: no recipe samples with it
                found.append("vllm not installed (no recipe needs it)")
                continue
            wrong.append(f"{package} is not installed")
            fixes.append(PIN_FIX.get(package, f"'{package}'"))
            continue
        found.append(f"{package} {have}")
        if package in PINS and not pinned(have, *PINS[package]):
            op, want = PINS[package]
            wrong.append(f"{package} {have} is not {op}{want}")
            fixes.append(PIN_FIX[package])
    together = requirement_misses()
    if wrong or together:
        fix = (f"pip install {' '.join(fixes)}" if fixes else
               "install versions that meet each other's requirements (pip check lists them)")
        raise AssertionError("; ".join(wrong + together) + f". Fix: {fix}")
    return ", ".join(found) + "; their stated requirements on each other met"
