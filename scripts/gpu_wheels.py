"""Pack the GPU check's wheels into one folder under 64 MiB, and install them on the GPU machine.

    python scripts/gpu_wheels.py pack STAGING DIR --python 3.12 [--lock FILE]  # gpu-wheels.sh
    python scripts/gpu_wheels.py install DIR TARGET --log FILE    # scripts/gpu-check.sh runs it
    python scripts/gpu_wheels.py carry [DIR ...]                  # what one device call carries

Standard library only: ``install`` runs on the GPU machine before anything else is there.

``pack`` stores every wheel's members, unchanged, in one xz archive (``wheels.tar.xz``) with
``MANIFEST.json`` (each wheel's file name, size, sha256, members and the requirements its
METADATA states); ``--lock FILE`` also writes that manifest without the members
(``scripts/gpu-wheels.lock.json``: what the tests check the carried list against). ``install``
writes each wheel back (a zip of the same members: the same wheel, its RECORD hashes hold) and
installs it with pip (``--no-index --no-deps --target TARGET``), or, without pip, unpacks it into
TARGET as pip would for a wheel without scripts.

``carry`` adds up what one call of the device tool sends: the working tree (tracked files and
untracked ones git does not ignore, as the tool counts them) and the carried folders; it fails
unless at least 16 MiB of the 64 MiB are to spare. ``pack`` runs it on the folder it wrote.

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
import time
import zipfile
from pathlib import Path

LIMIT_BYTES = 64 * 2**20  # what the device tool carries: working tree and carried paths together
SPARE_BYTES = 16 * 2**20  # what a call must leave free of that (a results/ folder, a log, a fix)
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
    """The CPython tag a wheel runs on alone (``cp312``): a compiled wheel's, or a pure one's
    built for one version (multiprocess's ``py312-none-any``); None for one any Python 3 takes
    (``py3-none-any``, ``cp312-abi3``: abi3 runs on that version and later)."""
    tags = wheel_tags(filename)
    one_version = re.fullmatch(r"py3(\d+)", tags["python"])
    if one_version:
        return f"cp3{one_version.group(1)}"
    if tags["abi"] in ("none", "abi3"):
        return None
    return tags["python"]


def requires(metadata: str) -> list[str]:
    """The requirements a wheel's METADATA states for every install: its ``Requires-Dist``
    lines, less those of an extra (``; extra == "..."``)."""
    out = []
    for line in metadata.splitlines():
        if not line.strip():
            break  # the headers end at the first blank line; the description follows
        if line.lower().startswith("requires-dist:"):
            value = line.split(":", 1)[1].strip()
            if not re.search(r"\bextra\s*==", value):
                out.append(value)
    return out


def _metadata(zf: zipfile.ZipFile) -> str:
    name = next((n for n in zf.namelist() if n.count("/") == 1 and
                 n.endswith(".dist-info/METADATA")), None)
    return zf.read(name).decode("utf-8", "replace") if name else ""


def pack(staging: Path, folder: Path, python: str, lock: Path | None = None) -> dict:
    """Every wheel in ``staging`` into ``folder/wheels.tar.xz`` and ``folder/MANIFEST.json``
    (and the manifest without members into ``lock``, when given)."""
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
                stated = requires(_metadata(zf))
            entries.append({"file": wheel.name, "bytes": len(data), "members": members,
                            "sha256": hashlib.sha256(data).hexdigest(), "requires": stated})
    packed = lzma.compress(buffer.getvalue(), preset=9)
    (folder / ARCHIVE).write_bytes(packed)
    manifest = {"python": python, "python_tag": want, "wheels": entries,
                "wheel_bytes": sum(e["bytes"] for e in entries), "packed_bytes": len(packed)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    total = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    if total > LIMIT_BYTES:
        raise SystemExit(f"{folder} holds {total / 2**20:.1f} MiB, over the 64 MiB the device "
                         "tool carries: take a wheel out of scripts/gpu-wheels.txt")
    if lock is not None:
        kept = {**manifest, "wheels": [{k: v for k, v in e.items() if k != "members"}
                                       for e in entries]}
        lock.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")
    return manifest


# --- what one call of the device tool carries ---------------------------------------------------

def _size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder (links counted as links)."""
    if path.is_symlink() or path.is_file():
        return path.lstat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_symlink() or p.is_file())


def tree_bytes(root: Path) -> int:
    """The working tree the device tool sends: tracked files and untracked files git does not
    ignore (``git ls-files --cached --others --exclude-standard``), plus ``shared/`` where the
    checkout has one. A tracked file deleted from the disk sends nothing."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], capture_output=True, check=True).stdout
    names = {n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n}
    total = sum((root / n).lstat().st_size for n in names
                if (root / n).is_symlink() or (root / n).is_file())
    shared = root / "shared"
    if shared.is_dir() and not any(n.startswith("shared/") for n in names):
        total += _size(shared)
    return total


def carry(root: Path, carried: dict[str, int]) -> dict:
    """What one call sends: the tree and each carried path's bytes (``carried``: path -> bytes),
    against the 64 MiB it takes; ``ok`` when at least ``SPARE_BYTES`` are left."""
    tree = tree_bytes(root)
    total = tree + sum(carried.values())
    spare = LIMIT_BYTES - total
    return {"tree_bytes": tree, "carried": dict(carried), "total_bytes": total,
            "limit_bytes": LIMIT_BYTES, "spare_bytes": spare, "ok": spare >= SPARE_BYTES}


def carry_text(report: dict) -> str:
    mib = 2**20
    parts = " + ".join([f"tree {report['tree_bytes'] / mib:.2f} MiB"] +
                       [f"{path} {size / mib:.2f} MiB" for path, size in report["carried"].items()])
    line = (f"carry: {parts} = {report['total_bytes'] / mib:.2f} of {LIMIT_BYTES // mib} MiB, "
            f"{report['spare_bytes'] / mib:.2f} MiB to spare (at least {SPARE_BYTES // mib})")
    if not report["ok"]:
        line += (". Fix: take a wheel out of scripts/gpu-wheels.txt, or git-ignore what the "
                 "call does not need (git status --ignored shows what is left)")
    return line


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
    started = time.monotonic()
    ok, lines = _install(folder, target)
    return ok, [*lines, f"seconds: {time.monotonic() - started:.1f}"]


def _install(folder: Path, target: Path) -> tuple[bool, list[str]]:
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
    packing.add_argument("--lock", type=Path, default=None,
                         help="also write the manifest without members here "
                              "(scripts/gpu-wheels.lock.json)")
    carrying = sub.add_parser("carry", help="what one device call carries: tree + DIRs")
    carrying.add_argument("folders", type=Path, nargs="*", default=[Path(".gpu-wheels")])
    installing = sub.add_parser("install", help="install DIR's wheels into TARGET")
    installing.add_argument("folder", type=Path)
    installing.add_argument("target", type=Path)
    installing.add_argument("--log", type=Path, default=None)
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    if args.command == "pack":
        manifest = pack(args.staging, args.folder, args.python, args.lock)
        print(f"{len(manifest['wheels'])} wheels, {manifest['wheel_bytes'] / 2**20:.2f} MiB as "
              f"wheels, {manifest['packed_bytes'] / 2**20:.2f} MiB packed into "
              f"{args.folder / ARCHIVE}, for Python {args.python}")
        report = carry(root, {str(args.folder): _size(args.folder)})
        print(carry_text(report))
        return 0 if report["ok"] else 1
    if args.command == "carry":
        missing = [str(f) for f in args.folders if not f.exists()]
        if missing:
            print(f"carry: no {', '.join(missing)}. Fix: make it first (scripts/gpu-wheels.sh)")
            return 1
        report = carry(root, {str(f): _size(f) for f in args.folders})
        print(carry_text(report))
        return 0 if report["ok"] else 1
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
