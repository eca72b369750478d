"""The built distribution is complete: installed without the checkout, as ``pip install .``,
``pip install <wheel>``, ``pipx install <wheel>`` or ``uvx --from <wheel>`` install it, the
server lists every skill and ``launch`` finds the recipes and runs the GRPO smoke.

How, offline: the source tree is copied (what a clone holds), an sdist is built from the copy with
setuptools' own PEP 517 hooks, and the wheel is built from the unpacked sdist (so a file missing
from the sdist is missing here too). Each install goes into a fresh venv made without pip, with
``pip --python VENV install --no-index --no-deps``: nothing is downloaded. The venv reaches its
dependencies (numpy, mcp, torch...) through a ``.pth`` line naming this test venv's site-packages,
where they are already installed; that line adds only a path, so the checkout's editable install
is not seen there (asserted).

uv installs a wheel's files as hard links to its cache (its default link mode on one file
system), and so do ``uvx``, ``uv tool`` and ``pipx --backend uv``; the skills must still be served
(they are the package's own files, read with ``importlib.resources``, not through the path door
that refuses hard-linked files). Those installs are run here for real, offline: uv from the test
venv (the ``test`` extra installs ``uv`` and ``pipx``; where they are missing the tests say so and
skip), a fresh uv cache, ``--offline --no-index``, the package's dependencies declared empty with
uv's ``dependency-metadata`` setting and reached through a small wheel holding the same ``.pth``
line (pipx: the same wheel with ``--preinstall`` and ``--pip-args``). Each test asserts that the
installed ``SKILL.md`` files really are hard links before it lists the skills.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
SKILLS = sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md"))
NOT_SHIPPED = shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info",
                                     "__pycache__", ".pytest_cache", ".hypothesis", "out")
# builds and installs the wheel in fresh venvs (tens of seconds each): pytest --slow
pytestmark = [pytest.mark.skipif(sys.platform == "win32", reason="venv layout is POSIX here"),
              pytest.mark.slow]


def _run(argv: list[str], cwd: Path, timeout: int = 300, **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(kw.pop("env", {}))
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False, **kw)
    assert proc.returncode == 0, f"{argv} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc


def _build(hook: str, source: Path, out: Path) -> Path:
    code = f"import setuptools.build_meta as b; print(b.{hook}({str(out)!r}))"
    name = _run([sys.executable, "-c", code], cwd=source).stdout.strip().splitlines()[-1]
    return out / name


def _fresh_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    python = path / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   cwd=path).stdout.strip()
    deps = sysconfig.get_paths()["purelib"]  # this test venv: the dependencies, installed
    Path(purelib, "_whileai_test_dependencies.pth").write_text(deps + "\n")
    return python


def _pip_install(python: Path, what: Path, *extra: str) -> None:
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-index",
          "--no-deps", *extra, what], cwd=python.parent)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dist")
    source = tmp / "clone"
    shutil.copytree(ROOT, source, ignore=NOT_SHIPPED)
    sdist = _build("build_sdist", source, tmp)
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "sdist", filter="data")
    (unpacked,) = (tmp / "sdist").iterdir()
    wheel = _build("build_wheel", unpacked, tmp)
    return {"source": source, "wheel": wheel, "tmp": tmp}


@pytest.fixture(scope="module")
def from_wheel(built):
    python = _fresh_venv(built["tmp"] / "venv-wheel")
    _pip_install(python, built["wheel"])
    return python


def _where_installed(python: Path, cwd: Path) -> dict:
    code = ("import json, whileai_core, server; from whileai_core.bundled import folder; "
            "print(json.dumps({'core': whileai_core.__file__, 'server': server.__file__, "
            "'skills': str(folder('skills')), 'recipes': str(folder('recipes'))}))")
    return json.loads(_run([python, "-c", code], cwd=cwd).stdout)


def _skills_over_stdio(script: Path | str, root: Path, *, prefix: tuple = (),
                       env: dict | None = None) -> list[str]:
    async def go():
        # list_skills is in the skills toolset (the resources are served whatever the toolsets)
        params = StdioServerParameters(command=str(script), args=[*map(str, prefix), "--root",
                                                                   str(root), "--toolsets",
                                                                   "skills"],
                                       cwd=str(root), env=env or {"PATH": os.environ.get("PATH",
                                                                                         "")})
        async with Client(params) as client:
            result = await client.call_tool("list_skills", {})
            resources = await client.list_resources()
            return result, resources

    result, resources = anyio.run(go)
    assert not result.is_error, result.content
    uris = {str(r.uri) for r in resources.resources}
    names = [s["name"] for s in result.structured_content["skills"]]
    assert {f"skill://{n}/SKILL.md" for n in names} <= uris
    return names


def test_the_wheel_carries_the_skills_and_the_recipes(built):
    import zipfile

    names = zipfile.ZipFile(built["wheel"]).namelist()
    for skill in SKILLS:
        assert f"whileai_core/_bundled/skills/{skill}/SKILL.md" in names
    for recipe in ("grpo", "dpo", "prime-rl"):
        assert f"whileai_core/_bundled/recipes/{recipe}/run.py" in names
    assert "whileai_core/_bundled/recipes/prime-rl/configs/grpo.toml" in names
    assert not [n for n in names if "__pycache__" in n or n.startswith(("tests/", "recipes/"))]


def test_installed_wheel_serves_the_skills_from_anywhere(from_wheel, tmp_path):
    where = _where_installed(from_wheel, tmp_path)
    venv = from_wheel.parent.parent
    assert all(Path(p).is_relative_to(venv) for p in where.values()), where  # not the checkout
    names = _skills_over_stdio(from_wheel.with_name("whileai-mcp"), tmp_path)
    assert names == SKILLS and len(names) >= 3


def test_installed_wheel_launches_the_grpo_smoke(from_wheel, tmp_path):
    pytest.importorskip("trl")  # the smoke needs the train extra (installed by scripts/test.sh)
    cli = from_wheel.with_name("whileai-skills")
    state = tmp_path / "state"
    plan = json.loads(_run([cli, "launch", "grpo", "--backend", "local", "--state-dir", state,
                            "--json"], cwd=tmp_path).stdout)
    assert plan["plan"]["ready"], plan["plan"]["notes"]
    bundled = from_wheel.parent.parent / "lib"
    assert str(bundled) in plan["plan"]["command"] and "_bundled/recipes/grpo/run.py" in \
        plan["plan"]["command"]
    run = json.loads(_run([cli, "launch", "grpo", "--backend", "local", "--state-dir", state,
                           "--confirm", "--json"], cwd=tmp_path).stdout)["run"]
    deadline = time.monotonic() + 600
    status = run["status"]
    while status in ("launching", "running") and time.monotonic() < deadline:
        time.sleep(2)
        status = json.loads(_run([cli, "status", run["id"], "--state-dir", state, "--json"],
                                 cwd=tmp_path).stdout)["status"]
    collected = json.loads(_run([cli, "collect", run["id"], "--state-dir", state, "--json"],
                                cwd=tmp_path).stdout)
    assert status == "succeeded", collected
    assert collected["n_before_rows"] == collected["n_after_rows"] > 0
    assert collected["verdict"] in ("moved", "moved_the_wrong_way", "flat", "within_noise",
                                    "no_detectable_change", "insufficient_data")


def test_pip_install_dot_from_a_clone(built, tmp_path):
    """`pip install .` (not editable): pip builds the wheel from the source tree itself."""
    python = _fresh_venv(tmp_path / "venv-dot")
    _pip_install(python, built["source"], "--no-build-isolation")
    where = _where_installed(python, tmp_path)
    assert Path(where["skills"]).is_relative_to(tmp_path / "venv-dot")
    assert sorted(p.parent.name for p in Path(where["skills"]).glob("*/SKILL.md")) == SKILLS
    plan = json.loads(_run([python.with_name("whileai-skills"), "launch", "prime-rl",
                            "--backend", "local", "--state-dir", tmp_path / "state", "--json"],
                           cwd=tmp_path).stdout)["plan"]
    assert plan["ready"] and str(Path(where["recipes"]) / "prime-rl" / "run.py") in \
        plan["command"]


def test_a_missing_skills_folder_is_said(from_wheel, tmp_path):
    """The failure the issue saw: 0 skills without a word. Now the listing says why."""
    async def go():
        params = StdioServerParameters(
            command=str(from_wheel.with_name("whileai-mcp")),
            args=["--root", str(tmp_path), "--skills", str(tmp_path / "nowhere"),
                  "--toolsets", "skills"],
            cwd=str(tmp_path), env={"PATH": os.environ.get("PATH", "")})
        async with Client(params) as client:
            return await client.call_tool("list_skills", {})

    result = anyio.run(go)
    assert result.structured_content["skills"] == []
    assert "does not exist" in result.structured_content["note"]
    assert "--skills DIR" in result.structured_content["note"]


# --- uv's hard links: uv pip, uvx, pipx with the uv backend ------------------------------------

def _tool(name: str) -> str:
    """``name`` beside this Python (the test extra installs uv and pipx there), else on PATH;
    the test is skipped, saying so, where it is neither."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.is_file() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed here: `pip install -e '.[test]'` (scripts/test.sh) "
                    f"installs it")
    return found


def _record(name: str, data: bytes) -> str:
    import base64
    import hashlib

    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


@pytest.fixture(scope="module")
def deps_wheel(tmp_path_factory) -> Path:
    """A wheel holding only the ``.pth`` line that names this test venv's site-packages (where
    the dependencies are installed), for installers that make their own venv (uvx, pipx)."""
    import zipfile

    info = "whileai_test_dependencies-0.0.0.dist-info"
    files = {
        "_whileai_test_dependencies.pth": (sysconfig.get_paths()["purelib"] + "\n").encode(),
        f"{info}/METADATA": b"Metadata-Version: 2.1\nName: whileai-test-dependencies\n"
                            b"Version: 0.0.0\n",
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests/test_wheel.py\n"
                         b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    out = tmp_path_factory.mktemp("deps") / "whileai_test_dependencies-0.0.0-py3-none-any.whl"
    with zipfile.ZipFile(out, "w") as whl:
        for name, data in files.items():
            whl.writestr(name, data)
        whl.writestr(f"{info}/RECORD", "\n".join(
            [_record(n, d) for n, d in files.items()] + [f"{info}/RECORD,,"]) + "\n")
    return out


def _uv_env(tmp: Path, uv: str) -> dict[str, str]:
    """uv and pipx kept to ``tmp`` and offline: their own cache, tool and bin folders, no user
    configuration, no Python download."""
    return {"PATH": f"{Path(uv).parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOME": str(tmp / "home"), "XDG_CONFIG_HOME": str(tmp / "xdg"),
            "UV_CACHE_DIR": str(tmp / "uv-cache"), "UV_TOOL_DIR": str(tmp / "uv-tools"),
            "UV_TOOL_BIN_DIR": str(tmp / "uv-bin"), "UV_PYTHON_DOWNLOADS": "never",
            "UV_OFFLINE": "1", "PIPX_HOME": str(tmp / "pipx"),
            "PIPX_BIN_DIR": str(tmp / "pipx-bin"), "PIPX_MAN_DIR": str(tmp / "pipx-man")}


def _linked_skills(folder: Path) -> list[Path]:
    files = sorted(folder.rglob("whileai_core/_bundled/skills/*/SKILL.md"))
    assert sorted({p.parent.name for p in files}) == SKILLS, files
    return [p for p in files if p.stat().st_nlink > 1]


def test_uv_pip_install_links_the_files_and_every_skill_is_served(built, tmp_path):
    """`uv pip install` in uv's default link mode (hard links into its cache)."""
    uv = _tool("uv")
    env = _uv_env(tmp_path, uv)
    python = _fresh_venv(tmp_path / "venv-uv")
    _run([uv, "pip", "install", "--python", python, "--no-index", "--no-deps", "--offline",
          "--link-mode", "hardlink", built["wheel"]], cwd=tmp_path, env=env)
    assert _linked_skills(tmp_path / "venv-uv") != []          # the case uv makes: hard links
    names = _skills_over_stdio(python.with_name("whileai-mcp"), tmp_path, env=env)
    assert names == SKILLS


def _uv_config(tmp: Path, wheel: Path) -> Path:
    version = wheel.name.split("-")[1]
    config = tmp / "uv.toml"
    # the dependencies are this venv's, reached through deps_wheel's .pth line: declared empty
    # here, as pip's --no-deps leaves them above (uv's `dependency-metadata` setting)
    config.write_text('dependency-metadata = [{ name = "whileai-skills", version = '
                      f'"{version}", requires-dist = [] }}]\n')
    return config


def test_uvx_from_the_wheel_serves_every_skill(built, deps_wheel, tmp_path):
    """`uvx --from <wheel> whileai-mcp`, spawned by the client as a host would spawn it."""
    uv = _tool("uv")
    env = _uv_env(tmp_path, uv)
    prefix = ("tool", "run", "--offline", "--no-index", "--config-file",
              _uv_config(tmp_path, built["wheel"]), "--python", sys.executable,
              "--with", deps_wheel, "--from", built["wheel"], "whileai-mcp")
    names = _skills_over_stdio(uv, tmp_path, prefix=prefix, env=env)
    assert names == SKILLS
    assert _linked_skills(tmp_path / "uv-cache") != []         # uvx's environment: hard links


def test_pipx_with_the_uv_backend_serves_every_skill(built, deps_wheel, tmp_path):
    """`pipx install --backend uv <wheel>`: pipx's venv, filled by uv (hard links)."""
    uv, pipx = _tool("uv"), _tool("pipx")
    env = _uv_env(tmp_path, uv)
    _run([pipx, "install", "--backend", "uv", "--preinstall", deps_wheel, "--pip-args",
          "--no-index --no-deps --offline", built["wheel"]], cwd=tmp_path, env=env)
    assert _linked_skills(tmp_path / "pipx" / "venvs") != []
    names = _skills_over_stdio(tmp_path / "pipx-bin" / "whileai-mcp", tmp_path, env=env)
    assert names == SKILLS
