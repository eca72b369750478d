"""Every Modal app imports without a token and declares what its README's "On Modal" table says.

The table row (function, GPU, image, volumes) is parsed from the README and compared with the
decorated function's own spec, read from the imported object, not a mock. Modal keeps the spec
on private attributes (`_spec_`, the image's layer closures); `spec_of` and `image_commands`
are the only two places that reach in, so a Modal upgrade that moves them fails here, loudly.
"""

import importlib
import re
from pathlib import Path

import pytest

modal = pytest.importorskip("modal")

ROOT = Path(__file__).resolve().parents[1]

APPS = [
    # (module, README)
    ("recipes.grpo.modal_grpo", "recipes/grpo/README.md"),
    ("recipes.dpo.modal_dpo", "recipes/dpo/README.md"),
    ("recipes.sft.modal_sft", "recipes/sft/README.md"),
    ("modal_prime_rl", "recipes/prime-rl/README.md"),  # a hyphenated folder: imported by path
]


def readme_rows(readme: str) -> list[dict]:
    text = (ROOT / readme).read_text(encoding="utf-8")
    section = text.split("## On Modal", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        volumes = dict((path, name) for name, path in
                       re.findall(r"`([\w.-]+)` at `(/[\w/.-]*)`", cells[3]))
        rows.append({"function": cells[0].strip("`"), "gpu": cells[1],
                     "pins": re.findall(r"`([^`]+)`", cells[2]), "volumes": volumes})
    assert rows, f"{readme} has no rows in its '## On Modal' table"
    return rows


def spec_of(function):
    return function._spec_


def image_commands(image) -> list[str]:
    """Every Dockerfile command of an image and its bases, walking Modal's lazy layers."""
    commands: list[str] = []
    seen = set()
    stack = [image]
    while stack:
        layer = stack.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        load = layer._load
        cells = dict(zip(load.__code__.co_freevars,
                         [c.cell_contents for c in (load.__closure__ or [])]))
        build = cells.get("dockerfile_function")
        if build is not None:
            commands += build("2025.06").commands
        dockerfile = cells.get("path")
        if isinstance(dockerfile, Path):  # Image.from_dockerfile: its file, and the Python added
            commands += dockerfile.read_text(encoding="utf-8").splitlines()
            commands.append(f"add_python={cells.get('add_python')}")
        if cells.get("base_image") is not None:
            stack.append(cells["base_image"])
        stack.extend((cells.get("base_images") or {}).values())
    return commands


@pytest.fixture
def no_token(monkeypatch, tmp_path):
    for key in ("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET", "MODAL_CONFIG_PATH", "MODAL_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


@pytest.mark.parametrize("module,readme", APPS)
def test_modal_functions_match_the_readme(module, readme, no_token, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / Path(readme).parent))
    app_module = importlib.import_module(module)
    for row in readme_rows(readme):
        function = getattr(app_module, row["function"])
        spec = spec_of(function)
        gpu = None if row["gpu"] in ("none", "CPU") else row["gpu"]
        assert spec.gpus == gpu, f"{row['function']}: GPU {spec.gpus!r}, README says {row['gpu']}"
        declared = {path: volume._name for path, volume in spec.volumes.items()}
        assert declared == row["volumes"], f"{row['function']}: volumes {declared}"
        text = "\n".join(image_commands(spec.image))
        for pin in row["pins"]:
            assert pin in text, f"{row['function']}: image has no {pin!r}"


def test_modal_gpus_agree_with_the_run_registry_defaults(no_token, monkeypatch):
    """launch_run plans GPU hours from defaults.RUN_GPU; the apps must ask for the same GPUs."""
    from whileai_core.defaults import RUN_GPU

    monkeypatch.syspath_prepend(str(ROOT / "recipes" / "prime-rl"))
    for recipe, module, function in (("grpo", "recipes.grpo.modal_grpo", "train_grpo"),
                                     ("dpo", "recipes.dpo.modal_dpo", "train_dpo"),
                                     ("sft", "recipes.sft.modal_sft", "train_sft"),
                                     ("prime-rl", "modal_prime_rl", "train")):
        spec = spec_of(getattr(importlib.import_module(module), function))
        assert spec.gpus == RUN_GPU[recipe], recipe


# --- a reused run name, a detached launch, TRL's own floors --------------------------------------

TRL_APPS = [("recipes.grpo.modal_grpo", "train_grpo", "GRPOSettings", "recipes.grpo.train"),
            ("recipes.dpo.modal_dpo", "train_dpo", "DPOSettings", "recipes.dpo.train"),
            # a data folder's DPO round (launch_run("dpo", data=...)) under the default name dpo
            ("recipes.dpo.modal_dpo", "train_dpo_data", "DPOSettings", "recipes.dpo.train"),
            ("recipes.sft.modal_sft", "train_sft", "SFTSettings", "recipes.sft.train")]


@pytest.mark.train
@pytest.mark.parametrize("module,function,settings,settings_module", TRL_APPS)
def test_a_run_name_that_holds_a_finished_run_is_refused_before_the_model_loads(
        module, function, settings, settings_module, no_token, monkeypatch, tmp_path):
    from whileai_core.errors import ConfigError

    app_module = importlib.import_module(module)
    defaults = getattr(importlib.import_module(settings_module), settings)()
    monkeypatch.setattr(app_module, "RUNS_PATH", str(tmp_path))
    monkeypatch.setattr(app_module, "load_policy", lambda name: pytest.fail("model loaded"))
    finished = tmp_path / defaults.run_name
    (finished / "adapter").mkdir(parents=True)
    (finished / "adapter" / "adapter_model.safetensors").write_bytes(b"trained weights")
    with pytest.raises(ConfigError, match=rf"run name '{defaults.run_name}' already holds a "
                                          r"finished run.*Fix: pick a new --run-name"):
        getattr(app_module, function).local(defaults.to_dict(), {})
    assert (finished / "adapter" / "adapter_model.safetensors").read_bytes() == b"trained weights"


def test_a_fresh_or_unfinished_run_folder_is_claimed(tmp_path):
    from recipes.modal_image import claim_run_folder

    claim_run_folder(tmp_path / "new", "whileai-grpo-runs")  # nothing there
    (tmp_path / "crashed" / "trainer").mkdir(parents=True)  # a run that never saved
    claim_run_folder(tmp_path / "crashed", "whileai-grpo-runs")


def test_trl_recipes_launch_detached(monkeypatch):
    """A client that stops (a closed laptop) must leave the run going: modal 1.6.4's
    App.run(detach=True); an ephemeral app (the default) stops with its client."""
    import contextlib
    import sys
    import types

    from recipes import trl_recipes

    seen = {}

    class App:
        @contextlib.contextmanager
        def run(self, **kwargs):
            seen.update(kwargs)
            yield self

    fake = types.ModuleType("fake_trl_app")
    fake.app = App()
    fake.train = types.SimpleNamespace(remote=lambda settings, records: {"ran": settings})
    monkeypatch.setitem(sys.modules, "fake_trl_app", fake)
    settings = types.SimpleNamespace(to_dict=lambda: {"run_name": "r"})
    assert trl_recipes.launch_on_modal("fake_trl_app", "train", settings, []) == {
        "ran": {"run_name": "r"}}
    assert seen == {"detach": True}


def test_the_image_and_the_train_extra_pin_datasets_and_accelerate_at_trl_s_own_floors():
    import tomllib
    from importlib.metadata import requires

    from packaging.requirements import Requirement
    from packaging.version import Version

    from recipes.modal_image import TRAIN_PACKAGES

    floors = {}
    for line in requires("trl"):
        req = Requirement(line)
        if req.marker is None and req.name in ("datasets", "accelerate"):
            floors[req.name] = next(s.version for s in req.specifier if s.operator == ">=")
    assert floors == {"datasets": "4.7.0", "accelerate": "1.10.1"}  # TRL 1.16.0's METADATA
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["train"]
    for pins in (TRAIN_PACKAGES, extra):
        for line in pins:
            req = Requirement(line)
            if req.name in floors:
                low = next(s.version for s in req.specifier if s.operator == ">=")
                assert Version(low) >= Version(floors[req.name]), line
