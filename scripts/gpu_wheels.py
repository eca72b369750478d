"""Pack the GPU check's wheels into one folder under 64 MiB, and install them on the GPU machine.

    python scripts/gpu_wheels.py pack STAGING DIR --python 3.12   # scripts/gpu-wheels.sh runs it
    python scripts/gpu_wheels.py install DIR TARGET --log FILE    # scripts/gpu-check.sh runs it

Standard library only: ``install`` runs on the GPU machine before anything else is there.

Why packed: as wheels, pyarrow, pandas and scipy alone are about 90 MB (their zip members are
deflated one by one); the folder the device tool carries holds 64 MiB. ``pack`` stores every
wheel's members, unchanged, in one xz archive (``wheels.tar.xz``; about 60% of the wheels' size)
with ``MANIFEST.json`` (each wheel's file name, size, sha256 and members); ``install`` writes each
wheel back (a zip of the same members: the same wheel, its RECORD hashes hold) and installs it
with pip (``--no-index --no-deps --target TARGET``), or, without pip, unpacks it into TARGET as
pip would for a wheel without scripts.

A wheel is installed only where the machine lacks its distribution or has an older version. A
compiled wheel's Python tag (``cp312``) must be the machine's: a mismatch fails the install with
the command that packs the right ones. The log's first line is the verdict (``pass`` or
``FAIL: ...``); the GPU check shows it as its first row.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import lzma
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

LIMIT_BYTES = 64 * 2**20  # what the device tool carries, all carried paths together
ARCHIVE = "wheels.tar.xz"
MANIFEST = "MANIFEST.json"
_WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)(-\d[^-]*)?-(?P<python>[^-]+)-"
                    r"(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$")


def wheel_tags(filename: str) -> dict:
    """Name, version and tags of a wheel file name (PEP 427)."""
    match = _WHEEL.match(filename)
    if not match:
        raise ValueError(f"{filename} is not a wheel file name")
    return match.groupdict()


def python_tag(version: str) -> str:
    """'3.12' -> 'cp312'."""
    major, minor = version.split(".")[:2]
    return f"cp{major}{minor}"


def compiled_for(filename: str) -> str | None:
    """The CPython tag a compiled wheel needs (``cp312``), or None for one any Python 3 takes
    (``py3-none-any``, ``cp312-abi3``: abi3 runs on that version and later)."""
    tags = wheel_tags(filename)
    if tags["abi"] in ("none", "abi3"):
        return None
    return tags["python"]


def pack(staging: Path, folder: Path, python: str) -> dict:
    """Every wheel in ``staging`` into ``folder/wheels.tar.xz`` and ``folder/MANIFEST.json``."""
    wheels = sorted(staging.glob("*.whl"))
    if not wheels:
        raise SystemExit(f"no wheels in {staging}")
    want = python_tag(python)
    wrong = [w.name for w in wheels if compiled_for(w.name) not in (None, want)]
    if wrong:
        raise SystemExit(f"wheels for another Python than {python} ({want}): {wrong}")
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for wheel in wheels:
            data = wheel.read_bytes()
            with zipfile.ZipFile(wheel) as zf:
                # files only: a zip may list folders too (charset_normalizer's does), which a
                # wheel does not need and a tar would name without their trailing slash
                members = [n for n in zf.namelist() if not n.endswith("/")]
                for name in members:
                    info = tarfile.TarInfo(f"{wheel.name}/{name}")
                    body = zf.read(name)
                    info.size = len(body)
                    tar.addfile(info, io.BytesIO(body))
            entries.append({"file": wheel.name, "bytes": len(data), "members": members,
                            "sha256": hashlib.sha256(data).hexdigest()})
    packed = lzma.compress(buffer.getvalue(), preset=9)
    (folder / ARCHIVE).write_bytes(packed)
    manifest = {"python": python, "python_tag": want, "wheels": entries,
                "wheel_bytes": sum(e["bytes"] for e in entries), "packed_bytes": len(packed)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    total = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    if total > LIMIT_BYTES:
        raise SystemExit(f"{folder} holds {total / 2**20:.1f} MiB, over the 64 MiB the device "
                         "tool carries: take a wheel out of scripts/gpu-wheels.txt")
    return manifest


def _installed(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def _older(have: str, wheel: str) -> bool:
    """Whether the installed version ``have`` is older than the wheel's (numeric parts only)."""
    def key(text: str) -> tuple:
        return tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.+-]", text)[:4])
    return key(have) < key(wheel)


def plan(manifest: dict) -> tuple[list[str], list[str], list[str]]:
    """(wheels to install, wheels the machine already has, compiled wheels for another Python)."""
    here = f"cp{sys.version_info.major}{sys.version_info.minor}"
    install, present, mismatched = [], [], []
    for entry in manifest["wheels"]:
        tags = wheel_tags(entry["file"])
        have = _installed(tags["name"])
        if have is not None and not _older(have, tags["version"]):
            present.append(f"{tags['name']} {have}")
            continue
        needs = compiled_for(entry["file"])
        if needs is not None and needs != here:
            mismatched.append(entry["file"])
            continue
        install.append(entry["file"])
    return install, present, mismatched


def _unpack(folder: Path, files: list[str], scratch: Path) -> list[Path]:
    """The wheels ``files`` written back from the archive into ``scratch``, checked by sha256."""
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    wanted = {e["file"]: e for e in manifest["wheels"] if e["file"] in files}
    scratch.mkdir(parents=True, exist_ok=True)
    with tarfile.open(folder / ARCHIVE, mode="r:xz") as tar:
        bodies: dict[str, dict[str, bytes]] = {f: {} for f in wanted}
        for member in tar:
            wheel, _, name = member.name.partition("/")
            if wheel in bodies and member.isfile():
                bodies[wheel][name] = tar.extractfile(member).read()
    out = []
    for file, entry in wanted.items():
        path = scratch / file
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for name in entry["members"]:
                if not name.endswith("/"):  # a folder entry: nothing to write back
                    zf.writestr(name, bodies[file][name])
        out.append(path)
    return out


def _install_without_pip(wheel: Path, target: Path) -> None:
    """What pip does for a wheel without scripts: its members into ``target``, ``.data``'s
    purelib/platlib folded in."""
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            parts = name.split("/")
            if parts[0].endswith(".data") and len(parts) > 2:
                if parts[1] not in ("purelib", "platlib"):
                    continue
                parts = parts[2:]
            dest = target.joinpath(*parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(zf.read(name))


def install(folder: Path, target: Path) -> tuple[bool, list[str]]:
    """Install what the machine lacks from ``folder`` into ``target``; (ok, log lines)."""
    if not (folder / MANIFEST).is_file():
        return True, [f"skipped: no wheel folder at {folder} (scripts/gpu-wheels.sh makes "
                      "one): nothing installed, the packages already here are used"]
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    todo, present, mismatched = plan(manifest)
    lines = [f"wheels packed for Python {manifest['python']}, this machine runs Python {here}",
             f"already here: {', '.join(present) or 'none'}"]
    if mismatched:
        lines.insert(0, f"FAIL: {len(mismatched)} compiled wheel(s) were packed for Python "
                        f"{manifest['python']} and this machine runs Python {here}. Fix: on the "
                        f"packing machine run scripts/gpu-wheels.sh {here}, carry the folder "
                        f"again. The wheels: {', '.join(mismatched)}")
        return False, lines
    if not todo:
        return True, ["pass: nothing to install", *lines]
    target.mkdir(parents=True, exist_ok=True)
    wheels = _unpack(folder, todo, target.parent / (target.name + "-wheels"))
    pip = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True)
    if pip.returncode == 0:
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--no-deps",
                               "--disable-pip-version-check", "--quiet", "--target",
                               str(target), *map(str, wheels)], capture_output=True, text=True)
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
            return False, [f"FAIL: pip could not install the wheels: {' / '.join(tail)}", *lines]
        how = "pip --no-index --no-deps --target"
    else:
        for wheel in wheels:
            _install_without_pip(wheel, target)
        how = "unpacked (no pip on this machine)"
    names = [wheel_tags(w.name)["name"] + " " + wheel_tags(w.name)["version"] for w in wheels]
    return True, [f"pass: installed {len(wheels)} wheel(s) into {target} ({how}): "
                  f"{', '.join(names)}", *lines]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/gpu_wheels.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    packing = sub.add_parser("pack", help="pack STAGING's wheels into DIR")
    packing.add_argument("staging", type=Path)
    packing.add_argument("folder", type=Path)
    packing.add_argument("--python", required=True, help="the GPU machine's Python, e.g. 3.12")
    installing = sub.add_parser("install", help="install DIR's wheels into TARGET")
    installing.add_argument("folder", type=Path)
    installing.add_argument("target", type=Path)
    installing.add_argument("--log", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.command == "pack":
        manifest = pack(args.staging, args.folder, args.python)
        print(f"{len(manifest['wheels'])} wheels, {manifest['wheel_bytes'] / 2**20:.1f} MiB as "
              f"wheels, {manifest['packed_bytes'] / 2**20:.1f} MiB packed into "
              f"{args.folder / ARCHIVE} (limit 64 MiB), for Python {args.python}")
        return 0
    try:
        ok, lines = install(args.folder, args.target)
    except Exception as exc:  # noqa: BLE001 - the log's first line must say what happened
        ok, lines = False, [f"FAIL: installing from {args.folder} raised {type(exc).__name__}: "
                            f"{exc}"]
    text = "\n".join(lines)
    print(text)
    if args.log is not None:
        args.log.parent.mkdir(parents=True, exist_ok=True)
        args.log.write_text(text + "\n", encoding="utf-8")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
