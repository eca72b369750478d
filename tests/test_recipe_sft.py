"""The SFT recipe: reading the data folder, the chat-template and leak checks, the refund demo,
and two real SFTTrainer + LoRA steps whose loss falls on the completion tokens only.

Expected values come from outside the code under test: token counts by hand (the byte-level
tokenizer makes one token per UTF-8 byte, one per special token), rewards re-scored with the
refund reward, and the first step's loss recomputed from the untrained model's log-probabilities
on the completion tokens alone.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from whileai_core import check_chat_template, load_sft, sft_examples
from whileai_core.errors import ConfigError, RowsError

pytest.importorskip("transformers")

SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")


def byte_count(text: str) -> int:
    """Tokens of ``text`` under the byte-level tokenizer, by hand: each special token is one
    token, everything else one token per UTF-8 byte."""
    count = 0
    for special in SPECIALS:
        count += text.count(special)
        text = text.replace(special, "")
    return count + len(text.encode("utf-8"))


def write_lines(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


CONV = {"messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "hi"},
                     {"role": "assistant", "content": "ok"},
                     {"role": "user", "content": "and?"},
                     {"role": "assistant", "content": "done"}]}


# --- the file and its examples ------------------------------------------------------------------

def test_load_sft_keeps_file_and_line_and_refuses_by_line(tmp_path):
    path = write_lines(tmp_path / "train.jsonl", [CONV, CONV])
    convs = load_sft(path)
    assert [c["source"] for c in convs] == [f"{path}, line 1", f"{path}, line 2"]
    bad = write_lines(tmp_path / "bad.jsonl", [CONV, {"messages": CONV["messages"][:2]}])
    with pytest.raises(RowsError, match=r"bad.jsonl, line 2: the conversation does not end with "
                                        r"an assistant turn"):
        load_sft(bad)
    wrong_role = write_lines(tmp_path / "role.jsonl",
                             [{"messages": [{"role": "bot", "content": "x"}]}])
    with pytest.raises(RowsError, match=r"role.jsonl, line 1: message 1"):
        load_sft(wrong_role)


def test_one_example_per_assistant_turn_with_everything_before_it_as_prompt():
    examples = sft_examples([{**CONV, "source": "f, line 1"}])
    assert [len(e["prompt"]) for e in examples] == [2, 4]
    assert [e["completion"][0]["content"] for e in examples] == ["ok", "done"]
    assert examples[1]["prompt"][-1] == {"role": "user", "content": "and?"}
    assert {e["source"] for e in examples} == {"f, line 1"}


# --- the chat template against the data ---------------------------------------------------------

def test_a_consistent_template_passes_with_token_counts_by_hand():
    from recipes.tiny_model import byte_tokenizer

    tok = byte_tokenizer()
    examples = sft_examples([{"messages": [{"role": "user", "content": "hi"},
                                           {"role": "assistant", "content": "ok"}],
                              "source": "t, line 1"}])
    result = check_chat_template(tok, examples, model="tiny", prompts=[[{"role": "user",
                                                                         "content": "q"}]])
    # <|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n = 1 + 7 + 1 + 1 + 1 + 10 = 21
    prompt = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert byte_count(prompt) == 21 == result.prompt_tokens
    # then ok<|im_end|>\n = 2 + 1 + 1
    assert result.completion_tokens == 4
    assert (result.n_examples, result.n_prompts) == (1, 1)


def _tok_with(template: str):
    from recipes.tiny_model import byte_tokenizer

    tok = byte_tokenizer()
    tok.chat_template = template
    return tok


CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}")
EXAMPLES = sft_examples([{"messages": [{"role": "system", "content": "s"},
                                       {"role": "user", "content": "hi"},
                                       {"role": "assistant", "content": "ok"}],
                          "source": "sft/train.jsonl, line 7"}])


@pytest.mark.parametrize("template, message", [
    # the generation prompt opens an empty thinking block the conversation never has
    (CHATML + "{% if add_generation_prompt %}<|im_start|>assistant\n<think></think>{% endif %}",
     r"the chat template of my/model does not fit sft/train.jsonl, line 7: the prompt rendered "
     r"alone and the same prompt inside the conversation part at character"),
    # a template that refuses the system role (as some do)
    ("{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('System role not "
     "supported') }}{% endif %}{{ m['content'] }}{% endfor %}",
     r"the chat template of my/model cannot render sft/train.jsonl, line 7 \(roles "
     r"system/user\): .*System role not supported"),
    # a template that drops the assistant's words
    ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{% if m['role'] != 'assistant' %}"
     "{{ m['content'] }}{% endif %}<|im_end|>\n{% endfor %}"
     "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
     r"sft/train.jsonl, line 7: the reply's text is not in what the template renders"),
])
def test_a_template_that_does_not_fit_the_data_is_refused_naming_both(template, message):
    with pytest.raises(ConfigError, match=message):
        check_chat_template(_tok_with(template), EXAMPLES, model="my/model")


def test_no_chat_template_is_refused():
    tok = _tok_with("")
    with pytest.raises(ConfigError, match="my/model has no chat template"):
        check_chat_template(tok, EXAMPLES, model="my/model")


def test_tokens_that_merge_across_the_boundary_are_refused():
    """Text prefix holds, token prefix does not: a BPE merge of 'x' + 'y' across the end of the
    generation prompt ('...x') and the start of the reply ('y...')."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {s: i for i, s in enumerate(alphabet)}
    vocab["xy"] = len(vocab)
    for special in SPECIALS:
        vocab[special] = len(vocab)
    core = Tokenizer(models.BPE(vocab=vocab, merges=[("x", "y")]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>",
                                  additional_special_tokens=list(SPECIALS[1:]))
    tok.chat_template = ("{% for m in messages %}{{ m['content'] }}{% if m['role'] == 'user' %}"
                         "x{% endif %}{% endfor %}")
    examples = sft_examples([{"messages": [{"role": "user", "content": "q"},
                                           {"role": "assistant", "content": "yes"}],
                              "source": "d, line 1"}])
    with pytest.raises(ConfigError, match=r"d, line 1: the prompt's tokens alone are not a "
                                          r"prefix of the conversation's tokens"):
        check_chat_template(tok, examples, model="bpe")


# --- the data folder ----------------------------------------------------------------------------

def _folder(tmp_path, grader="def grade(ask, reply):\n    return float(reply == 'ok')\n"):
    folder = tmp_path / "data"
    folder.mkdir()
    write_lines(folder / "train.jsonl", [{"messages": [{"role": "user", "content": "say ok"},
                                                      {"role": "assistant", "content": "ok"}]}])
    write_lines(folder / "holdout.jsonl", [
        {"task_id": "h1", "messages": [{"role": "user", "content": "please say ok now"},
                                       {"role": "assistant", "content": "ok"}], "extra": 1},
        {"task_id": "h1", "messages": [{"role": "user", "content": "please say ok now"}]},
        {"task_id": "h2", "messages": [{"role": "user", "content": "reply with ok"}]}])
    (folder / "grader.py").write_text(grader)
    return folder


def test_a_data_folder_reads_into_one_ask_per_held_out_task(tmp_path):
    from recipes.sft.data import load_grader, read_data

    data = read_data(_folder(tmp_path))
    assert [h["task_id"] for h in data.holdout] == ["h1", "h2"]
    assert data.holdout[0]["messages"] == [{"role": "user", "content": "please say ok now"}]
    assert data.holdout[0]["extra"] == 1
    grade = load_grader(data.grader_source, data.grader_origin)
    assert grade(data.holdout[0], "ok") == 1.0 and grade(data.holdout[0], "no") == 0.0


@pytest.mark.parametrize("remove, grader, message", [
    ("holdout.jsonl", None, r"no holdout.jsonl there"),
    (None, "def grade(ask, reply)\n    return 1\n", r"grader.py, line 1: expected ':'"),
    (None, "def judge(ask, reply):\n    return 1\n", r"grader.py defines no grade\(ask, reply\)"),
])
def test_a_bad_data_folder_is_one_error_naming_the_file(tmp_path, remove, grader, message):
    from recipes.sft.data import read_data

    folder = _folder(tmp_path, grader) if grader else _folder(tmp_path)
    if remove:
        (folder / remove).unlink()
    with pytest.raises(ConfigError, match=message):
        read_data(folder)


def test_reading_a_data_folder_never_runs_its_grader(tmp_path):
    """read_data (what a plan and a launch call in the server) parses grader.py and runs none
    of it; an import it cannot satisfy fails where the grader runs, in the training process."""
    from recipes.sft.data import load_grader, read_data

    marker = tmp_path / "ran"
    data = read_data(_folder(tmp_path, f"open({str(marker)!r}, 'w')\nimport not_a_module_here\n"
                                       "def grade(ask, reply):\n    return 1.0\n"))
    assert not marker.exists()
    with pytest.raises(ConfigError, match=r"grader.py: importing it raised ModuleNotFoundError"):
        load_grader(data.grader_source, data.grader_origin)


def test_a_grader_answer_that_is_not_a_number_names_the_task(tmp_path):
    from recipes.sft.data import load_grader, read_data

    data = read_data(_folder(tmp_path, "def grade(ask, reply):\n    return float('nan')\n"))
    grade = load_grader(data.grader_source, data.grader_origin)
    with pytest.raises(ConfigError, match=r"grade\(\) returned nan for held-out task 'h1'"):
        grade(data.holdout[0], "ok")


def test_a_training_prompt_that_is_a_held_out_ask_is_refused(tmp_path):
    from recipes.sft.data import read_data
    from recipes.sft.train import check_no_leak

    folder = _folder(tmp_path)
    write_lines(folder / "train.jsonl", [
        {"messages": [{"role": "user", "content": "say ok"}, {"role": "assistant", "content": "ok"}]},
        {"messages": [{"role": "user", "content": "Reply with OK!"},
                      {"role": "assistant", "content": "ok"}]}])
    data = read_data(folder)
    with pytest.raises(ConfigError, match=r"train.jsonl, line 2: its prompt matches held-out task "
                                          r"'h2' \(verbatim prompt"):
        check_no_leak(data.conversations, data.holdout)


# --- the refund demo ----------------------------------------------------------------------------

def test_the_refund_demo_is_the_skill_pipeline_on_the_refund_prompts(tmp_path):
    from recipes.grpo.prompts import write_prompts
    from recipes.grpo.reward import Case, score
    from recipes.sft.data import build_refund_demo, demo_attempts
    from whileai_core import split_by_task

    data = build_refund_demo(tmp_path / "demo", seed=0, share=0.2)
    records = {r["task_id"]: r for r in write_prompts(0)}
    # 120 prompts, round(0.2 x 120) = 24 held out by task, the other 96 each keep one reply
    assert (len(data.conversations), len(data.holdout)) == (96, 24)
    split = split_by_task([{"task_id": t} for t in records], share=0.2, seed=0)
    assert sorted(h["task_id"] for h in data.holdout) == sorted(split.holdout_tasks)
    # each record's first attempt follows the policy (score 1.0), the second breaks it
    for record in records.values():
        case = Case(record["category"], record["order_id"] or None)
        good, bad = demo_attempts(record)
        assert score(good, case) == 1.0 and score(bad, case) < 1.0
    # every kept reply is a passing one for a training (never a held-out) prompt
    held = {h["messages"][-1]["content"] for h in data.holdout}
    by_user = {r["text"]: r for r in records.values()}
    for conv in data.conversations:
        user = conv["messages"][1]["content"]
        record = by_user[user]
        assert record["task_id"] not in split.holdout_tasks
        assert score(conv["messages"][-1]["content"],
                     Case(record["category"], record["order_id"] or None)) == 1.0
    assert len(held) == 24
    files = sorted(p.name for p in (tmp_path / "demo").iterdir())
    assert files == ["grader.py", f"{data.holdout_name}.jsonl", "train.jsonl"]
    assert data.holdout_name.startswith("holdout-")  # frozen under its content name


# --- two real steps -----------------------------------------------------------------------------

@pytest.mark.slow
def test_two_sft_steps_train_on_completion_tokens_only(tmp_path):
    """One step of 4 examples, twice (2 epochs). The first step's logged loss is the untrained
    model's mean negative log-likelihood over the completion tokens of those 4 examples (the
    adapter starts at zero), computed here from the model's own log-probabilities; the mean over
    every token would differ."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("trl")
    from recipes.sft.data import build_refund_demo
    from recipes.sft.train import SFTSettings, run_sft
    from recipes.tiny_model import byte_tokenizer, tiny_model

    data = build_refund_demo(tmp_path / "demo", seed=0, share=0.2)
    settings = SFTSettings(model="tiny", epochs=2, examples_per_step=4, max_completion_tokens=8,
                           holdout_samples=1, lora_r=4, lora_alpha=8, learning_rate=1e-2)
    tok = byte_tokenizer()
    results, trainer = run_sft(tiny_model(tok, seed=0), tok, settings, data, tmp_path / "out",
                               model_label="tiny", cpu=True, max_examples=4)
    assert results["train_steps"] == results["planned_steps"] == 2
    assert results["updates"]["changed_tensors"] == results["updates"]["trainable_tensors"] > 0

    examples = sft_examples(data.conversations)[:4]
    reference = tiny_model(tok, seed=0)
    completion_nll = all_nll = 0.0
    n_completion = n_all = masked = 0
    for example in examples:
        prompt = tok.apply_chat_template(example["prompt"], tokenize=False,
                                         add_generation_prompt=True)
        whole = tok.apply_chat_template(example["prompt"] + example["completion"], tokenize=False)
        n_prompt = byte_count(prompt)  # by hand, not through the recipe or TRL
        ids = torch.tensor([tok(whole, add_special_tokens=False)["input_ids"]])
        assert ids.shape[1] == byte_count(whole)
        with torch.no_grad():
            logp = torch.log_softmax(reference(ids).logits[0, :-1], dim=-1)
        nll = -logp[torch.arange(ids.shape[1] - 1), ids[0, 1:]]
        completion_nll += float(nll[n_prompt - 1:].sum())   # predictions of tokens n_prompt..
        n_completion += ids.shape[1] - n_prompt
        all_nll += float(nll.sum())
        n_all += ids.shape[1] - 1
        masked += n_prompt
    first = results["loss_history"][0]
    assert first == pytest.approx(completion_nll / n_completion, rel=1e-5)
    assert abs(first - all_nll / n_all) > 1e-3
    # the trainer's own labels: exactly the prompt tokens masked, every completion token kept
    masks = results["loss_mask"]
    assert masks["n_wrong_mask"] == 0
    assert masks["prompt_tokens_masked"] == masked
    assert masks["completion_tokens_trained"] == n_completion
    assert math.isfinite(results["loss_history"][1])
    rows = trainer.train_dataset
    for labels in rows["labels"]:
        assert labels[0] == -100 and labels[-1] != -100


def test_the_held_out_file_may_be_the_one_freeze_holdout_wrote_and_must_be_unedited(tmp_path):
    from recipes.sft.data import read_data
    from whileai_core import freeze_holdout

    folder = _folder(tmp_path)
    (folder / "holdout.jsonl").unlink()
    asks = [{"task_id": "h1", "messages": [{"role": "user", "content": "please say ok now"}]},
            {"task_id": "h2", "messages": [{"role": "user", "content": "reply with ok"}]}]
    frozen = freeze_holdout(asks, folder)
    data = read_data(folder)
    assert data.holdout_name == frozen.name and [h["task_id"] for h in data.holdout] == ["h1", "h2"]
    path = Path(frozen.path)
    path.write_text(path.read_text().replace("reply with ok", "reply with OK"))
    with pytest.raises(ConfigError, match="was edited after it was frozen"):
        read_data(folder)
    (folder / "holdout.jsonl").write_text(path.read_text())
    with pytest.raises(ConfigError, match=r"2 held-out files \(holdout-[0-9a-f]{12}.jsonl, "
                                          r"holdout.jsonl\)"):
        read_data(folder)


def test_settings_json_in_the_data_folder_sets_the_run_and_flags_win(tmp_path):
    from recipes.sft.data import read_data
    from recipes.sft.run import modal_call
    from recipes.sft.train import SFTSettings, with_data_settings
    from whileai_core.errors import ArgumentError

    folder = _folder(tmp_path)
    (folder / "settings.json").write_text('{"model": "Qwen/Qwen3-8B", "epochs": 3}')
    data = read_data(folder)
    merged = with_data_settings(SFTSettings(), data)
    assert (merged.model, merged.epochs) == ("Qwen/Qwen3-8B", 3)
    assert with_data_settings(SFTSettings(epochs=1), data, given={"epochs"}).epochs == 1
    settings = modal_call("s-9", None, data=str(folder))["args"][0]
    assert (settings["model"], settings["epochs"], settings["run_name"]) == (
        "Qwen/Qwen3-8B", 3, "s-9")
    (folder / "settings.json").write_text('{"epoch": 3}')
    with pytest.raises(ArgumentError, match=r"unknown SFT settings \['epoch'\]"):
        read_data(folder)
    (folder / "settings.json").write_text('{"epochs": 0}')
    with pytest.raises(ArgumentError, match=r"`epochs` must be an integer in \[1, 100\], got 0"):
        read_data(folder)


def test_a_grader_that_raises_is_one_error_naming_it_and_the_task(tmp_path):
    from recipes.sft.data import load_grader, read_data

    data = read_data(_folder(tmp_path, "def grade(ask, reply):\n    return ask['prompt']\n"))
    grade = load_grader(data.grader_source, data.grader_origin)
    with pytest.raises(ConfigError, match=r"grader.py: grade\(\) raised KeyError: 'prompt' on "
                                          r"held-out task 'h1'"):
        grade(data.holdout[0], "ok")


@pytest.mark.parametrize("grader", [
    # an annotated assignment binds grade as a plain one does
    "from typing import Callable\n\ndef _exact(ask, reply):\n    return float(reply == 'ok')\n\n"
    "grade: Callable = _exact\n",
    # a grade defined under a fallback import or a condition still runs at import
    "try:\n    from fancy_grader import grade\nexcept ImportError:\n"
    "    def grade(ask, reply):\n        return float(reply == 'ok')\n",
    "import sys\n\nif sys.version_info >= (3, 8):\n    def grade(ask, reply):\n"
    "        return float(reply == 'ok')\n",
])
def test_a_grade_bound_by_annotation_or_inside_try_or_if_is_accepted_unrun(tmp_path, grader):
    from recipes.sft.data import check_grader

    marker = tmp_path / "ran"
    # the check parses and never runs: a line that would write a marker leaves none
    check_grader(f"open({str(marker)!r}, 'w').close()\n" + grader, "grader.py")
    assert not marker.exists()


@pytest.mark.parametrize("grader", [
    "from typing import Callable\n\ngrade: Callable\n",   # annotated, never assigned
    "def make():\n    def grade(ask, reply):\n        return 1.0\n    return grade\n",  # local
    "class Grader:\n    def grade(self, ask, reply):\n        return 1.0\n",           # a method
    "if False:\n    pass\nelse:\n    judge = None\n",
])
def test_a_grader_with_no_module_level_grade_is_still_refused(grader):
    from recipes.sft.data import check_grader

    with pytest.raises(ConfigError, match=r"grader.py defines no grade\(ask, reply\)"):
        check_grader(grader, "grader.py")
