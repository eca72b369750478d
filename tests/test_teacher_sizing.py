"""The OPD teacher's start line, sized from its weights; no line when it is already served; a Modal
launch refused when its config expects a localhost teacher the recipe does not start.

Found by a cold agent: the "start first" line always served the teacher on GPU 0 at 0.4 memory, even for
Qwen3-32B (~65 GB of weights) and even when the teacher was already served at the URL given; and
launch_run planned a Modal run of a config whose teacher was http://localhost:8001/v1 without a
word. Expected numbers are worked by hand from the rule in whileai_core.prime_rl.teacher:
weights = params x bytes per parameter; colocated when weights <= 0.5 x 0.4 x 80 GB = 16 GB;
otherwise tp = the smallest power of two with weights <= tp x 0.5 x 0.9 x 80 GB = tp x 36 GB.
"""

from __future__ import annotations

import json
import tomllib

import pytest

from test_server_support import call, error_text, ok
from whileai_core import prime_rl_config
from whileai_core.errors import ConfigError
from whileai_core.prime_rl.teacher import plan_teacher
from whileai_core.runs import launch_run

URL = "http://localhost:8001/v1"


@pytest.mark.parametrize("model, params, dtype, layout, gpus, weights", [
    ("PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL", None, None, "colocated", 0, 1.2),  # 0.6 x 2
    ("Qwen/Qwen3-8B", None, None, "colocated", 0, 16.0),       # 16 GB: just fits beside
    ("Qwen/Qwen3-14B", None, None, "dedicated", 1, 28.0),      # 28 > 16, 28 <= 36: tp 1
    ("Qwen/Qwen3-32B", None, None, "dedicated", 2, 64.0),      # 64 > 36, <= 72: tp 2
    ("Qwen/Qwen3-32B", None, "fp8", "dedicated", 1, 32.0),     # 1 byte a parameter
    ("meta-llama/Llama-3.1-70B-Instruct", None, None, "dedicated", 4, 140.0),  # <= 144
    ("my-org/house-teacher", 32.0, "bfloat16", "dedicated", 2, 64.0),          # size given
    ("my-org/house-teacher", None, None, "size_unknown", 0, None),
])
def test_the_teacher_is_sized_from_its_weights(model, params, dtype, layout, gpus, weights):
    plan = plan_teacher(model, URL, params_b=params, dtype=dtype, first_free_gpu=2)
    assert plan.layout == layout and plan.gpus == gpus
    assert plan.weights_gb == (None if weights is None else pytest.approx(weights))
    if layout == "dedicated":
        devices = ",".join(str(2 + i) for i in range(gpus))     # after prime-rl's two GPUs
        assert plan.start.startswith(f"CUDA_VISIBLE_DEVICES={devices} uv run inference "
                                     f"--vllm.model {model} --server.port 8001")
        assert (f"--vllm.tensor-parallel-size {gpus}" in plan.start) == (gpus > 1)
        assert "--vllm.gpu-memory-utilization 0.9" in plan.start
    else:                                                       # beside the policy on GPU 0
        assert plan.start == (f"CUDA_VISIBLE_DEVICES=0 uv run inference --vllm.model {model} "
                              "--server.port 8001 --vllm.gpu-memory-utilization 0.4")
    assert ("--vllm.quantization fp8" in plan.start) == (dtype == "fp8")


def test_a_teacher_too_big_for_one_node_is_refused_with_the_fix():
    # 405B bf16 = 810 GB: tp 32 > 8 GPUs of a node
    with pytest.raises(ConfigError, match="teacher_served=true"):
        plan_teacher("meta-llama/Llama-3.1-405B", URL)


def test_a_served_or_remote_teacher_gets_no_start_line():
    assert plan_teacher("Qwen/Qwen3-32B", URL, served=True).start is None
    remote = plan_teacher("Qwen/Qwen3-32B", "https://teacher.example.org/v1")
    assert remote.layout == "served" and remote.start is None


def opd(teacher: str, **kw):
    return prime_rl_config("reverse-text", {"name": "opd", "teacher": teacher},
                           model="Qwen/Qwen3-8B", **kw)


def test_the_config_header_starts_a_32b_teacher_on_two_gpus_of_its_own():
    cfg = opd(f"Qwen/Qwen3-32B@{URL}")
    assert cfg.teacher.layout == "dedicated" and cfg.teacher.tensor_parallel == 2
    assert cfg.setup_commands == [cfg.teacher.start]
    assert "#   CUDA_VISIBLE_DEVICES=2,3 uv run inference --vllm.model Qwen/Qwen3-32B" in cfg.text
    # the policy's vLLM keeps prime-rl's default memory: nothing shares its GPU
    assert "vllm" not in tomllib.loads(cfg.text).get("inference", {})


def test_a_small_teacher_still_shares_gpu_0_as_before():
    cfg = opd(f"PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@{URL}")
    assert cfg.teacher.layout == "colocated"
    assert tomllib.loads(cfg.text)["inference"]["vllm"]["gpu_memory_utilization"] == 0.4


def test_teacher_served_writes_no_start_line():
    cfg = opd(f"Qwen/Qwen3-32B@{URL}", teacher_served=True)
    assert cfg.setup_commands == [] and "start first" not in cfg.text
    assert cfg.teacher.layout == "served"
    assert not any(n.startswith("start the teacher first") for n in cfg.notes)


def test_through_the_protocol_the_teacher_object_and_teacher_served(server):
    method = {"name": "opd", "teacher": {"url": URL, "model": "Qwen/Qwen3-32B", "vocab": 151936},
              "student_vocab": 151936}
    args = {"taskset": "reverse-text", "model": "Qwen/Qwen3-8B", "method": method}
    out = ok(call(server, "prime_rl_config", args))
    assert out["teacher"]["gpus"] == 2 and out["teacher"]["tensor_parallel"] == 2
    served = ok(call(server, "prime_rl_config", {**args, "teacher_served": True}))
    assert served["teacher"]["start"] is None and served["setup_commands"] == []


def test_the_method_schema_documents_the_teacher_object(server):
    # found by a cold agent: the MCP form of a teacher had to be guessed. The tool's schema stays small and
    # names the resource that holds every method's object form.
    import anyio
    from mcp import Client

    async def go():
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            read = await client.read_resource("whileai://methods/schema.json")
            return tools["prime_rl_config"], json.loads(read.contents[0].text)

    tool, schema = anyio.run(go)
    method = tool.input_schema["properties"]["method"]
    assert "whileai://methods/schema.json" in method["description"] and method["examples"]
    assert len(json.dumps(tool.input_schema)) < 8000
    objects = {alt["title"]: alt for alt in schema["anyOf"][1]["oneOf"]}
    opd_schema = objects["OPDObject"]
    teacher = next(a for a in opd_schema["properties"]["teacher"]["anyOf"] if a.get("type") ==
                   "object")
    for field in ("url", "model", "vocab", "params_b", "dtype"):
        assert teacher["properties"][field]["description"]
    assert teacher["examples"][0]["url"] == URL
    assert opd_schema["examples"] and objects["AsyncObject"]["examples"]


# --- launch_run on Modal: a localhost teacher --------------------------------------------------

@pytest.fixture
def config_with(tmp_path):
    def write(teacher: str, name: str = "opd.toml", **kw):
        path = tmp_path / name
        opd(teacher, out=path, **kw)
        return path
    return write


def test_modal_refuses_a_localhost_teacher_the_recipe_does_not_start(config_with, tmp_path):
    path = config_with(f"Qwen/Qwen3-32B@{URL}")
    with pytest.raises(ConfigError) as err:
        launch_run(str(path), backend="modal", state_dir=tmp_path / "state")
    text = str(err.value)
    assert "localhost is the run's own container" in text and "Nothing was planned" in text
    assert "teacher_served=true" in text and "2 GPU(s)" in text
    assert not (tmp_path / "state").exists()


def test_modal_refuses_a_0000_teacher_the_recipe_never_starts(config_with, tmp_path):
    path = config_with("PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@http://0.0.0.0:8001/v1")
    with pytest.raises(ConfigError, match="only at localhost or 127.0.0.1"):
        launch_run(str(path), backend="modal", state_dir=tmp_path / "state")


def test_modal_plans_a_small_localhost_teacher_the_recipe_starts(config_with, tmp_path):
    path = config_with(f"PrimeIntellect/Qwen3-0.6B-Reverse-Text-RL@{URL}")
    plan = launch_run(str(path), backend="modal", state_dir=tmp_path / "state")
    assert plan.action == "planned"


def test_modal_plans_a_remote_teacher(config_with, tmp_path):
    path = config_with("Qwen/Qwen3-32B@https://teacher.example.org/v1", teacher_served=True)
    assert launch_run(str(path), backend="modal", state_dir=tmp_path / "state").action == \
        "planned"


def test_the_refusal_reaches_an_mcp_client(server, ws, monkeypatch, tmp_path):
    monkeypatch.setenv("WHILEAI_STATE_DIR", str(tmp_path / "state"))
    opd(f"Qwen/Qwen3-32B@{URL}", out=ws / "opd.toml")
    text = error_text(call(server, "launch_run", {"config_or_recipe": "opd.toml"}), "launch_run")
    assert "on Modal localhost is the run's own container" in text and "Fix:" in text
