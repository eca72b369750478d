"""The GPU check on this CPU: ``scripts/gpu-check.sh`` reaches its table with the GPU rows
skipped and leaves in ``$OUT`` only what the device tool returns; the wheels it carries are only
what the GPU machine lacks, and one call's whole carry leaves room to spare; the wheel folder it
installs from packs, unpacks and refuses the wrong Python.

The script runs as it would on the GPU machine, with no wheel folder (the suite's packages are
already here): the recipes' two-step paths run on the CPU in float32, the CUDA and bf16 rows and
every GPU column say skipped. The wheel tests build small wheels by hand (PEP 427: a zip with
the package and its ``.dist-info``), so the expected install is known without the tool. The
machine's package list (``scripts/gpu-machine-packages.txt``, its image read 2026-11-17) and the
packed wheels' stated requirements (``scripts/gpu-wheels.lock.json``, from their METADATA) are
data; the checks against them use ``packaging``'s own requirement parser.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("trl")
pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import gpu_wheels  # noqa: E402
import rehearse_gpu_check  # noqa: E402

# what the device tool returns from $OUT (its notes, "Limits"): 8 files, $OUT/a/b/file deepest
RETURNED_FILES, RETURNED_DEPTH = 8, 2


@pytest.fixture(scope="module")
def cpu_check(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-check") / "out"   # fresh, as the device tool's $OUT
    work = out.parent / "work"
    env = {**os.environ, "OUT": str(out), "GPU_WHEELS": str(out.parent / "no-wheels"),
           "GPU_CHECK_WORK": str(work), "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "gpu-check.sh"), "--cpu"],
                          capture_output=True, text=True, timeout=1200, env=env, cwd=out.parent)
    return proc, out, work


@pytest.mark.slow
def test_the_gpu_check_reaches_its_table_on_a_cpu_with_the_gpu_rows_skipped(cpu_check):
    proc, out, _ = cpu_check
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
        assert all(s > 0 for s in row["step_seconds"]) and row["seconds"] > sum(row["step_seconds"])
        changed, trainable = map(int, re.match(r"(\d+) of (\d+) changed", row["weights"]).groups())
        assert 0 < changed <= trainable
        # pass@1 before and after, each with its interval and n, then the paired delta
        cell = r"\d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] \(n=\d+ tasks\)"
        assert re.match(rf"{cell} -> {cell}; delta [+-]\d\.\d{{3}}", row["held_out"]), row
        # each recipe's whole results come back inside the one JSON
        results = report["recipes"][name]
        assert results["updates"]["runtime"]["device"] == "cpu"
        assert results["train_steps"] == 2 and results["before_rows"] and results["after_rows"]
    # GRPO at two iterations: the first step on-policy (ratio exactly 1, nothing clipped)
    assert rows["grpo"]["clip"].startswith("0.000, ")
    assert rows["watch"]["status"] == "pass" and "held-out at [0, 2]" in rows["watch"]["detail"]
    # the budget counts from the shell script's start: installing is in it
    assert re.match(r"\d+ s in all: installing \d+ s, the check \d+ s, on the CPU",
                    rows["wall clock"]["detail"]), rows["wall clock"]
    table = (out / "gpu-check.md").read_text()
    assert table.startswith("GPU check, ") and "| grpo | pass | cpu float32" in table
    assert "CPU only: skipped wheels, cuda, bf16, wall clock" in table
    assert "not a GPU check" in table
    assert table.rstrip().splitlines()[-1].startswith("verdict: pass in ")
    log = (out / "gpu-check.log").read_text()
    assert log.startswith("skipped: no wheel folder") and table.splitlines()[0] in log
    assert report["picture"] == "gpu-check-watch.png"
    assert (out / "gpu-check-watch.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_out_holds_only_what_the_device_tool_returns(cpu_check):
    """At most 8 files, two folders down at most: the recipes' trainer folders, models and
    adapters went to the scratch folder, not to $OUT."""
    _, out, work = cpu_check
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["gpu-check-watch.png", "gpu-check.json", "gpu-check.log", "gpu-check.md"]
    assert len(files) <= RETURNED_FILES and all(f.count("/") <= RETURNED_DEPTH for f in files)
    assert all((out / f).stat().st_size < 16 * 2**20 for f in files)  # 16 MiB a file
    assert (work / "recipes" / "grpo" / "trainer").is_dir()  # the recipes did write, elsewhere
    assert rehearse_gpu_check.returned(out) == (files, [])


def test_the_budget_counts_the_install(tmp_path):
    """A check of 5 s that started, with its install, 500 s ago is over the 480 s budget."""
    from recipes import gpu_check

    log = tmp_path / "no-such-log"
    row = gpu_check.budget_row(True, 5.0, time.time() - 500.0, log)
    assert row.status == "FAIL" and row.detail.startswith("500 s in all")
    assert gpu_check.budget_row(True, 5.0, time.time() - 100.0, log).status == "pass"
    # the install's own seconds, read from its log, are named beside the check's
    wheels_log = tmp_path / "wheels.log"
    wheels_log.write_text("pass: installed 1 wheel(s)\nseconds: 81.0\n")
    row = gpu_check.budget_row(True, 5.0, time.time() - 86.0, wheels_log)
    assert row.status == "pass" and "installing 81 s, the check 5 s" in row.detail
    # run without the shell script, the budget cannot count what it did not see, and says so
    assert "installing not counted" in gpu_check.budget_row(True, 5.0, None, None).detail


# --- what is carried: only what the machine lacks, and room to spare -----------------------------

def _requirements(path: Path) -> dict[str, str]:
    from packaging.requirements import Requirement

    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            req = Requirement(line)
            (version,) = [s.version for s in req.specifier if s.operator == "=="]
            out[rehearse_gpu_check.normalize(req.name)] = version
    return out


def test_the_carried_wheels_are_only_what_the_gpu_machine_lacks():
    machine = rehearse_gpu_check.machine_packages()
    text = (ROOT / "scripts" / "gpu-machine-packages.txt").read_text()
    assert "# read: 2026-11-17" in text and "# python: 3.12" in text
    assert {"torch", "transformers", "peft", "accelerate", "pyarrow", "pandas", "scipy",
            "requests", "xxhash", "numpy"} <= set(machine)
    carried = _requirements(ROOT / "scripts" / "gpu-wheels.txt")
    assert not set(carried) & set(machine), set(carried) & set(machine)
    assert {"trl", "datasets", "pydantic", "pydantic-core", "msgspec"} <= set(carried)


def test_every_carried_wheels_requirements_are_carried_or_on_the_machine():
    """Each requirement a packed wheel states (for Python 3.12 on Linux) names a distribution
    that is carried or on the machine, at a version that satisfies it where the version is
    known; whileai_core's own dependencies likewise (less mcp, which the check never imports:
    the rehearsal runs without it)."""
    from packaging.requirements import Requirement

    lock = json.loads((ROOT / "scripts" / "gpu-wheels.lock.json").read_text())
    assert lock["python"] == "3.12"
    carried = _requirements(ROOT / "scripts" / "gpu-wheels.txt")
    machine = rehearse_gpu_check.machine_packages()
    packed = {rehearse_gpu_check.normalize(gpu_wheels.wheel_tags(w["file"])["name"]):
              gpu_wheels.wheel_tags(w["file"])["version"] for w in lock["wheels"]}
    assert packed == carried  # the lock is of this very list
    env = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
           "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
           "implementation_name": "cpython", "platform_python_implementation": "CPython",
           "extra": ""}
    stated = [(w["file"], r) for w in lock["wheels"] for r in w["requires"]]
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    stated += [("whileai-skills", r) for r in project if not r.startswith("mcp")]
    unmet = []
    for source, text in stated:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        name = rehearse_gpu_check.normalize(req.name)
        version = carried.get(name) or machine.get(name)
        if name not in carried and name not in machine:
            unmet.append(f"{source}: {text} (neither carried nor on the machine)")
        elif version is not None and not req.specifier.contains(version, prereleases=True):
            unmet.append(f"{source}: {text} (has {version})")
    assert not unmet, unmet


def test_one_calls_carry_leaves_16_mib_of_the_64_to_spare():
    """The tree as the device tool counts it, plus the packed wheel folder (its size recorded
    when it was packed), under 48 MiB; results/ (where the recipes' launches write) is ignored,
    so a launch's files never count."""
    lock = json.loads((ROOT / "scripts" / "gpu-wheels.lock.json").read_text())
    folder = lock["packed_bytes"] + len(json.dumps(lock)) * 2  # the archive and its manifest
    report = gpu_wheels.carry(ROOT, {".gpu-wheels": folder})
    assert report["ok"] and report["spare_bytes"] >= 16 * 2**20, gpu_wheels.carry_text(report)
    paths = ["results/prime-rl/calls.json", ".gpu-wheels/wheels.tar.xz",
             "gpu-check-out/gpu-check.json"]
    ignored = subprocess.run(["git", "-C", str(ROOT), "check-ignore", *paths],
                             capture_output=True, text=True)
    assert ignored.stdout.split() == paths


def test_the_carry_counts_untracked_files_and_refuses_too_little_room(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("/ignored/\n")
    (repo / "tracked.bin").write_bytes(b"x" * 1000)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    (repo / "untracked.bin").write_bytes(b"y" * 500)                 # sent: not ignored
    (repo / "ignored").mkdir()
    (repo / "ignored" / "big.bin").write_bytes(b"z" * 5000)          # not sent
    report = gpu_wheels.carry(repo, {"w": 3000})
    assert report["tree_bytes"] == 1000 + 500 + len("/ignored/\n")
    assert report["total_bytes"] == report["tree_bytes"] + 3000 and report["ok"]
    tight = gpu_wheels.carry(repo, {"w": 48 * 2**20})
    assert not tight["ok"] and tight["spare_bytes"] < 16 * 2**20
    assert "Fix: take a wheel out of scripts/gpu-wheels.txt" in gpu_wheels.carry_text(tight)


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
