"""The GPU check on this CPU: ``scripts/gpu-check.sh`` reaches its table with the GPU rows
skipped, and the wheel folder it installs from packs, unpacks and refuses the wrong Python.

The script runs as it would on the GPU machine, with no wheel folder (the suite's packages are
already here): the recipes' two-step paths run on the CPU in float32, the CUDA and bf16 rows and
every GPU column say skipped. The wheel tests build small wheels by hand (PEP 427: a zip with
the package and its ``.dist-info``), so the expected install is known without the tool.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import gpu_wheels  # noqa: E402


@pytest.fixture(scope="module")
def cpu_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-check")
    env = {**os.environ, "OUT": str(out), "GPU_WHEELS": str(out / "no-wheels"),
           "GPU_CHECK_SITE": str(out / "site"), "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "gpu-check.sh"), "--cpu"],
                          capture_output=True, text=True, timeout=1200, env=env, cwd=out)
    return proc, out


def test_the_gpu_check_reaches_its_table_on_a_cpu_with_the_gpu_rows_skipped(cpu_check):
    proc, out = cpu_check
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "gpu-check.json").read_text())
    rows = {r["name"]: r for r in report["rows"]}
    assert list(rows) == ["wheels", "cuda", "bf16", "grpo", "dpo", "sft", "watch", "wall clock"]
    assert report["gpu"] is False
    assert rows["wheels"]["status"] == "skipped" and "no wheel folder" in rows["wheels"]["detail"]
    for name in ("cuda", "bf16", "wall clock"):  # the 8-minute budget is the GPU machine's
        assert rows[name]["status"] == "skipped", rows[name]
    for name in ("grpo", "dpo", "sft"):
        row = rows[name]
        assert row["status"] == "pass", row
        assert row["device"].startswith("cpu float32") and "GPU row skipped" in row["device"]
        assert row["peak_gib"] is None and len(row["step_seconds"]) == 2  # two optimizer steps
        assert all(s > 0 for s in row["step_seconds"])
        changed, trainable = map(int, re.match(r"(\d+) of (\d+) changed", row["weights"]).groups())
        assert 0 < changed <= trainable
        # pass@1 before and after, each with its interval and n, then the paired delta
        cell = r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] \(n=\d+ tasks\)"
        assert re.match(rf"{cell} -> {cell}; delta [+-]\d\.\d{{3}}", row["held_out"]), row
        results = json.loads((out / name / "results.json").read_text())
        assert results["updates"]["runtime"]["device"] == "cpu"
    # GRPO at two iterations: the first step on-policy (ratio exactly 1, nothing clipped)
    assert rows["grpo"]["clip"].startswith("0.000, ")
    assert rows["watch"]["status"] == "pass" and "held-out at [0, 2]" in rows["watch"]["detail"]
    table = (out / "gpu-check.md").read_text()
    assert table.startswith("GPU check, ") and "| grpo | pass | cpu float32" in table
    assert "CPU only: skipped wheels, cuda, bf16, wall clock" in table
    assert "not a GPU check" in table
    assert table.rstrip().splitlines()[-1].startswith("verdict: pass in ")
    assert (out / "wheels.log").read_text().startswith("skipped: no wheel folder")


# --- the wheel folder ----------------------------------------------------------------------------

def make_wheel(folder: Path, name: str, version: str, tag: str = "py3-none-any") -> Path:
    """A minimal wheel: ``name/__init__.py`` (VERSION) and its .dist-info (METADATA, WHEEL,
    RECORD), as PEP 427 lays it out."""
    path = folder / f"{name}-{version}-{tag}.whl"
    info = f"{name}-{version}.dist-info"
    files = {f"{name}/__init__.py": f"VERSION = {version!r}\n",
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
                              f"Tag: {tag}\n"}
    files[f"{info}/RECORD"] = "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for member, text in files.items():
            zf.writestr(member, text)
    return path


def install(folder: Path, target: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "gpu_wheels.py"), "install",
                           str(folder), str(target), "--log", str(target.parent / "log")],
                          capture_output=True, text=True, timeout=300)


def test_packed_wheels_install_what_the_machine_lacks_and_import(tmp_path):
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    staging = tmp_path / "staging"
    wheels = [make_wheel(staging, "whileai_probe_pkg", "1.2.0"),
              make_wheel(staging, "six", "1.0.0")]  # six is installed here, newer: left alone
    manifest = gpu_wheels.pack(staging, tmp_path / "folder", here)
    assert [e["file"] for e in manifest["wheels"]] == sorted(w.name for w in wheels)
    assert {p.name for p in (tmp_path / "folder").iterdir()} == {"wheels.tar.xz", "MANIFEST.json"}
    done = install(tmp_path / "folder", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    log = (tmp_path / "log").read_text().splitlines()
    assert log[0].startswith("pass: installed 1 wheel(s)") and "whileai_probe_pkg 1.2.0" in log[0]
    assert re.search(r"already here: six \d", log[2])
    probe = subprocess.run([sys.executable, "-c", "import whileai_probe_pkg as p; print(p.VERSION)"],
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH":
                                                                str(tmp_path / "site")})
    assert probe.stdout.strip() == "1.2.0"
    # the wheel written back is the packed one, byte for byte in every member
    rebuilt = tmp_path / "site-wheels" / wheels[0].name
    with zipfile.ZipFile(rebuilt) as a, zipfile.ZipFile(wheels[0]) as b:
        assert {n: a.read(n) for n in a.namelist()} == {n: b.read(n) for n in b.namelist()}


def test_compiled_wheels_for_another_python_fail_the_install_with_the_fix(tmp_path):
    other = "3.9" if sys.version_info[:2] != (3, 9) else "3.10"
    tag = gpu_wheels.python_tag(other)
    make_wheel(tmp_path / "staging", "whileai_probe_c", "1.0", f"{tag}-{tag}-manylinux_2_17_x86_64")
    gpu_wheels.pack(tmp_path / "staging", tmp_path / "folder", other)
    done = install(tmp_path / "folder", tmp_path / "site")
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert done.returncode == 1
    first = (tmp_path / "log").read_text().splitlines()[0]
    assert first.startswith(f"FAIL: 1 compiled wheel(s) were packed for Python {other} and this "
                            f"machine runs Python {here}. Fix: on the packing machine run "
                            f"scripts/gpu-wheels.sh {here}, carry the folder again.")
    assert first.endswith(f"The wheels: whileai_probe_c-1.0-{tag}-{tag}-manylinux_2_17_x86_64.whl")
    assert not (tmp_path / "site").exists()  # nothing half-installed


def test_pack_refuses_a_folder_over_64_mib_and_wheels_for_another_python(tmp_path, monkeypatch):
    make_wheel(tmp_path / "staging", "whileai_probe_pkg", "1.0")
    monkeypatch.setattr(gpu_wheels, "LIMIT_BYTES", 100)
    with pytest.raises(SystemExit, match="over the 64 MiB the device tool carries"):
        gpu_wheels.pack(tmp_path / "staging", tmp_path / "folder", "3.12")
    make_wheel(tmp_path / "staging", "whileai_probe_c", "1.0", "cp39-cp39-manylinux_2_17_x86_64")
    with pytest.raises(SystemExit, match=r"wheels for another Python than 3.12 \(cp312\)"):
        gpu_wheels.pack(tmp_path / "staging", tmp_path / "folder", "3.12")


def test_a_wheel_that_lists_its_folders_packs_and_installs(tmp_path):
    """A zip may list folder entries (charset_normalizer's wheel does); they are left out."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    wheel = make_wheel(tmp_path / "staging", "whileai_probe_dirs", "2.0")
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr("whileai_probe_dirs/", "")
        zf.writestr("whileai_probe_dirs/sub/", "")
        zf.writestr("whileai_probe_dirs/sub/data.txt", "kept")
    gpu_wheels.pack(tmp_path / "staging", tmp_path / "folder", here)
    done = install(tmp_path / "folder", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "whileai_probe_dirs" / "sub" / "data.txt").read_text() == "kept"


def test_an_install_that_breaks_says_so_in_the_logs_first_line(tmp_path):
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    make_wheel(tmp_path / "staging", "whileai_probe_pkg", "1.0")
    gpu_wheels.pack(tmp_path / "staging", tmp_path / "folder", here)
    (tmp_path / "folder" / "wheels.tar.xz").write_bytes(b"not xz")  # a truncated copy
    done = install(tmp_path / "folder", tmp_path / "site")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (tmp_path / "log").read_text().startswith(
        f"FAIL: installing from {tmp_path / 'folder'} raised ")
