"""Rehearse the GPU check on this CPU machine as the GPU machine would run it.

    python scripts/rehearse_gpu_check.py --dir /tmp/rehearsal [--wheels DIR] [-- --cpu ...]

What "as the GPU machine would" means here, step by step:

1. A Python environment holding only what the GPU machine holds: every distribution of
   ``scripts/gpu-machine-packages.txt`` that this interpreter has installed is linked into
   ``DIR/machine-site`` (its top-level files, from the distribution's RECORD), and a fresh venv
   ``DIR/venv`` sees that folder and nothing else. TRL, datasets, pydantic, msgspec... (what the
   GPU machine lacks) are absent; the script says which it checked.
2. The wheel folder: ``--wheels DIR``, or ``scripts/gpu-wheels.sh`` run now for this Python into
   ``DIR/wheels`` (needs PyPI).
3. ``scripts/gpu-check.sh`` with a fresh ``OUT=DIR/out``, that venv's Python and the wheel
   folder, with no network at all where ``unshare -n`` works (root), as on the GPU machine.
4. What ``OUT`` holds, against what the device tool returns: at most 8 files, no deeper than two
   folders. Exit status 1 when it holds more, or when the check itself failed.

The differences that remain: this machine's torch (a CPU build) and its Python, not the GPU
machine's; no GPU, so the recipes run on the CPU (pass ``-- --cpu`` to say so outright; the GPU
rows are skipped either way).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import venv
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MACHINE = ROOT / "scripts" / "gpu-machine-packages.txt"
RETURNED_FILES, RETURNED_DEPTH = 8, 2  # the device tool: 8 files, $OUT/a/b/file at the deepest
ABSENT = ("trl", "datasets", "pydantic", "msgspec", "tomli_w", "dill")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def machine_packages(path: Path = MACHINE) -> dict[str, str | None]:
    """The GPU machine's distributions: normalized name -> the version seen there, or None."""
    out: dict[str, str | None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            out[normalize(name)] = version or None
    return out


def link_machine_site(site: Path) -> tuple[list[str], list[str]]:
    """Link this interpreter's copies of the machine's distributions into ``site``; (linked,
    listed but not installed here)."""
    wanted = machine_packages()
    site.mkdir(parents=True, exist_ok=True)
    linked, found = [], set()
    for dist in metadata.distributions():
        name = normalize(dist.metadata["Name"] or "")
        if name not in wanted or name in found or not dist.files:
            continue
        found.add(name)
        base = Path(dist.locate_file(""))
        for top in sorted({p.parts[0] for p in dist.files if p.parts and p.parts[0] != ".."}):
            source, link = base / top, site / top
            if source.exists() and not link.exists():
                link.symlink_to(source)
        linked.append(f"{name} {dist.version}")
    return sorted(linked), sorted(set(wanted) - found)


def make_venv(folder: Path, site: Path) -> Path:
    venv.EnvBuilder(with_pip=False, clear=True).create(folder)
    python = folder / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()"
                              "['purelib'])"], capture_output=True, text=True, check=True)
    Path(purelib.stdout.strip(), "machine-site.pth").write_text(f"{site}\n", encoding="utf-8")
    return python


def returned(out: Path) -> tuple[list[str], list[str]]:
    """(every file under ``out``, those deeper than the device tool returns)."""
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    deep = [f for f in files if f.count("/") > RETURNED_DEPTH]
    return files, deep


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/rehearse_gpu_check.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", type=Path, required=True, help="scratch folder (replaced)")
    parser.add_argument("--wheels", type=Path, default=None,
                        help="a packed wheel folder for this Python (default: pack one now)")
    parser.add_argument("check_args", nargs="*", help="after --: arguments for gpu_check.py")
    args = parser.parse_args(argv)
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    shutil.rmtree(args.dir, ignore_errors=True)
    args.dir.mkdir(parents=True)
    linked, not_here = link_machine_site(args.dir / "machine-site")
    python = make_venv(args.dir / "venv", args.dir / "machine-site")
    print(f"machine site: {len(linked)} of the GPU machine's distributions linked from this "
          f"Python {here} ({', '.join(linked)}); {len(not_here)} listed there are not installed "
          "here")
    present = [m for m in ABSENT if subprocess.run(
        [str(python), "-c", f"import {m}"], capture_output=True).returncode == 0]
    if present:
        print(f"FAIL: the rehearsal venv imports {', '.join(present)}, which the GPU machine lacks")
        return 1
    print(f"absent, as on the GPU machine: {', '.join(ABSENT)}")
    wheels = args.wheels
    if wheels is None:
        wheels = args.dir / "wheels"
        subprocess.run(["bash", str(ROOT / "scripts" / "gpu-wheels.sh"), here, str(wheels)],
                       check=True, cwd=ROOT)
    out = args.dir / "out"  # fresh: the device tool empties $OUT before each command
    env = {**os.environ, "OUT": str(out), "GPU_WHEELS": str(wheels), "PYTHON": str(python)}
    env.pop("PYTHONPATH", None)
    command = ["bash", str(ROOT / "scripts" / "gpu-check.sh"), *args.check_args]
    isolated = shutil.which("unshare") and subprocess.run(
        ["unshare", "-n", "true"], capture_output=True).returncode == 0
    if isolated:
        command = ["unshare", "-n", *command]
    print(f"running: {' '.join(command)} ({'no network at all' if isolated else 'network NOT cut: unshare -n refused'})",
          flush=True)
    check = subprocess.run(command, env=env, cwd=ROOT)
    files, deep = returned(out)
    fits = len(files) <= RETURNED_FILES and not deep
    print(f"OUT holds {len(files)} file(s) ({', '.join(files)}); the device tool returns at most "
          f"{RETURNED_FILES}, {RETURNED_DEPTH} folders down: {'fits' if fits else 'DOES NOT FIT'}"
          + (f" (too deep: {', '.join(deep)})" if deep else ""))
    print(f"gpu-check.sh exit status {check.returncode}")
    return 0 if fits and check.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
