"""The SFT recipe's input: a data folder (yours, or the refund demo built from the prompt set).

The folder (``train.jsonl``, one ``holdout*.jsonl``, ``grader.py``, optional ``settings.json``)
is described in ``recipes/sft/README.md``. ``grader.py`` runs only in the training process:
reading the folder for a plan or a launch parses it without running it. Without ``--data`` the
recipe builds the refund demo, whose teacher is a program that knows the policy, a stand-in for
a stronger model's traces: say so when reading its numbers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Self

from whileai_core.errors import ConfigError
from whileai_core.safepath import read_text

TRAIN_FILE, HOLDOUT_FILE, GRADER_FILE = "train.jsonl", "holdout.jsonl", "grader.py"
SETTINGS_FILE = "settings.json"
HOLDOUT_GLOB = "holdout*.jsonl"  # holdout.jsonl, or holdout-<hash>.jsonl from freeze_holdout
DATA_FILES = (TRAIN_FILE, HOLDOUT_FILE, GRADER_FILE)
REFUND_GRADER = Path(__file__).with_name("refund_grader.py")
VALID_GRADER = "the grader must be valid Python defining grade(ask, reply)"
NO_GRADE = ("defines no grade(ask, reply). Fix: add a function grade(ask, reply) returning a "
            "number (1.0 = pass)")


class DataPayload:
    """A data folder's contents as JSON for the Modal function, which rebuilds it from there."""

    def payload(self) -> dict:
        return asdict(self)

    @classmethod
    def from_payload(cls, data: dict) -> Self:
        return cls(**data)


@dataclass(frozen=True)
class SFTData(DataPayload):
    """What a run trains on and scores: conversations (each with its ``source``), one held-out
    ask per task (``task_id``, ``messages``, extra fields: the grader's ``ask``), the grader's
    source text and where it came from."""

    conversations: list[dict]
    holdout: list[dict]
    grader_source: str
    grader_origin: str
    origin: str
    holdout_name: str | None = None
    settings: dict | None = None
    demo: dict | None = None


def read_data(folder: str | Path) -> SFTData:
    """The three files of a data folder, each checked; a problem names the file, line and fix."""
    from whileai_core import load_sft

    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"data folder {folder}: no such folder", fix="the folder holding "
                          f"{', '.join(DATA_FILES)} (the sft-from-traces skill writes it)")
    held_files = sorted(folder.glob(HOLDOUT_GLOB))
    missing = [name for name in DATA_FILES if not (folder / name).is_file()
               and not (name == HOLDOUT_FILE and held_files)]
    if missing:
        raise ConfigError(f"data folder {folder}: no {', '.join(missing)} there",
                          fix=f"{TRAIN_FILE} from export_sft, {HOLDOUT_FILE} with the held-out "
                          "tasks' traces (split_by_task's holdout_out, or freeze_holdout into "
                          "the folder), "
                          f"{GRADER_FILE} defining grade(ask, reply)")
    if len(held_files) > 1:
        holdout_file(folder, "keep exactly one holdout*.jsonl in the folder")
    conversations = load_sft(folder / TRAIN_FILE)
    asks, holdout_name = read_holdout(held_files[0])
    source, origin = read_grader(folder)
    return SFTData(conversations=conversations, holdout=asks,
                   grader_source=source, grader_origin=origin, origin=str(folder),
                   holdout_name=holdout_name, settings=_settings(folder / SETTINGS_FILE))


def read_holdout(held_file: Path) -> tuple[list[dict], str | None]:
    """One held-out ask per task (the first trace's prompt and other fields), and the file's
    content name when it is a frozen task set."""
    from whileai_core import load_traces
    from whileai_core.traces import prompt_messages

    holdout_name = _frozen_name(held_file)
    asks: dict[str, dict] = {}
    for record in load_traces(held_file):
        task = str(record["task_id"])
        if task not in asks:  # one ask per held-out task: the first trace's prompt
            extra = {k: v for k, v in record.items() if k not in ("messages", "task_id")}
            asks[task] = {**extra, "task_id": task, "messages": prompt_messages(record)}
    return list(asks.values()), holdout_name


def folder_holdout_name(folder: Path) -> str | None:
    """The content name of the folder's held-out set (the run's ``data.holdout_name``), or None;
    read as :func:`read_data` reads it, so a plan and the run name the same set."""
    return read_holdout(holdout_file(folder, "keep exactly one holdout*.jsonl in the folder"))[1]


def holdout_file(folder: Path, fix: str) -> Path:
    """The folder's one ``holdout*.jsonl``; none or several is a ConfigError ending in ``fix``."""
    held_files = sorted(folder.glob(HOLDOUT_GLOB))
    if len(held_files) != 1:
        raise ConfigError(f"data folder {folder}: {len(held_files)} held-out files "
                          f"({', '.join(p.name for p in held_files) or 'no holdout*.jsonl'}); "
                          f"which one is the test? Fix: {fix}")
    return held_files[0]


def read_grader(folder: Path) -> tuple[str, str]:
    """``grader.py``'s text and where it came from; a syntax error or a missing ``grade()``
    fails now, before any training (parsed, never run: see :func:`check_grader`)."""
    origin = str(folder / GRADER_FILE)
    source = read_text(folder / GRADER_FILE, "config", argument="grader", error=ConfigError)
    check_grader(source, origin)
    return source, origin


def _settings(path: Path, settings_class=None) -> dict | None:
    """``settings.json``'s fields, checked by the recipe's settings class (``SFTSettings``)."""
    if not path.is_file():
        return None
    if settings_class is None:
        from recipes.sft.train import SFTSettings as settings_class

    try:
        data = json.loads(read_text(path, "rows", argument="settings", error=ConfigError))
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})", fix="one object, e.g. "
                          '{"model": "Qwen/Qwen3-8B", "epochs": 2}') from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a JSON {type(data).__name__}, not an object", fix="e.g. "
                          '{"model": "Qwen/Qwen3-8B"}')
    if "run_name" in data:
        raise ConfigError(f"{path}: `run_name` is the launch's, not the data's", fix="remove it "
                          "(launch_run's name, or --run-name)")
    checked = settings_class.from_dict({**settings_class().to_dict(), **data})
    if hasattr(checked, "check"):
        checked.check()
    return data


def _frozen_name(path: Path) -> str | None:
    """The held-out set's content name (``eval_fingerprint``) when it has one record per task;
    a file freeze_holdout named whose content changed since is refused."""
    from whileai_core import eval_fingerprint
    from whileai_core.errors import RowsError

    try:
        fingerprint = eval_fingerprint(path)
    except RowsError:  # several traces per task: a valid held-out file, but not a task set
        return None
    if fingerprint.file_matches is False:
        raise ConfigError(f"{path} was edited after it was frozen: its content hashes to "
                          f"{fingerprint.name}, not the name it carries", fix="restore it, or "
                          "freeze the edited set again (a new name) and score the baseline on it")
    return fingerprint.name


def check_grader(source: str, origin: str) -> None:
    """Refuse a grader that is not Python or defines no top-level ``grade``, without running any
    of it: a plan and a launch read the data folder in the server, where user code never runs;
    the grader runs only where the model trains (:func:`load_grader`, in the run's process)."""
    import ast

    try:
        tree = ast.parse(source, filename=origin)
    except SyntaxError as exc:
        raise ConfigError(f"{origin}, line {exc.lineno}: {exc.msg}",
                          fix=f"{VALID_GRADER}") from None
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, nesting too deep
        raise ConfigError(f"{origin}: not a Python file the parser can read ({exc})",
                          fix=f"{VALID_GRADER}") from None
    if not any(_binds_grade(node) for node in _module_statements(tree.body)):
        raise ConfigError(f"{origin} {NO_GRADE}")


def _module_statements(body: list) -> Iterator:
    """Every statement that runs at module level: the top ones and those nested in an ``if``,
    ``try``, ``with``, loop or ``match`` (never a function's or a class's body)."""
    import ast

    for node in body:
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                yield from _module_statements(inner)
        for handler in getattr(node, "handlers", ()):  # try: ... except: (a fallback grade)
            yield from _module_statements(handler.body)
        for case in getattr(node, "cases", ()):
            yield from _module_statements(case.body)


def _binds_grade(node) -> bool:
    """Whether one statement binds the name ``grade``: ``def``, ``grade = ...``, ``grade: T =
    ...`` (an annotation alone binds nothing), or an import named or renamed ``grade``."""
    import ast

    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return node.name == "grade"
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "grade" for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return node.value is not None and isinstance(node.target, ast.Name) and \
            node.target.id == "grade"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name) == "grade" for a in node.names)
    return False


def load_grader(source: str, origin: str):
    """``grade(ask, reply)`` from a grader file's text; its answers are checked when called."""
    import math

    namespace: dict = {"__name__": "sft_grader", "__file__": origin}
    try:
        exec(compile(source, origin, "exec"), namespace)  # noqa: S102 - the user's own grader
    except SyntaxError as exc:
        raise ConfigError(f"{origin}, line {exc.lineno}: {exc.msg}",
                          fix=f"{VALID_GRADER}") from None
    except Exception as exc:
        raise ConfigError(f"{origin}: importing it raised {type(exc).__name__}: {exc}", fix="a "
                          "grader imports only what the training image has (the standard "
                          "library, whileai_core, recipes)") from None
    grade = namespace.get("grade")
    if not callable(grade):
        raise ConfigError(f"{origin} {NO_GRADE}")

    def checked(ask: dict, reply: str) -> float:
        try:
            value = grade(ask, reply)
        except Exception as exc:  # the user's grader: one line naming it, never a traceback
            raise ConfigError(f"{origin}: grade() raised {type(exc).__name__}: {exc} on held-out "
                              f"task {ask['task_id']!r} (reply {reply[:60]!r})", fix="the grader "
                              "gets the ask as {'task_id', 'messages': the prompt, ...your "
                              "holdout fields} and the reply's text") from None
        if isinstance(value, bool):
            value = float(value)
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{origin}: grade() returned {value!r} for held-out task "
                              f"{ask['task_id']!r}", fix="return a finite number (1.0 pass)")
        return float(value)

    return checked


# --- the refund demo ---------------------------------------------------------------------------

_ASK_FOR_ID = ("I can help with that. What is your order number?",
               "Sorry to hear that. Could you give me the order number so I can look it up?",
               "I'd be glad to help. What's the order id for this purchase?")
_OFF_TOPIC = ("Thanks for asking! I can only help with refunds and orders here; our help page "
              "answers that question.",
              "Good question, but I handle refunds only. Please check the help page or contact "
              "our support team for that.")


def _pick(options: tuple[str, ...], task_id: str) -> str:
    return options[int(hashlib.sha256(task_id.encode()).hexdigest(), 16) % len(options)]


def _call(name: str, **arguments) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def demo_attempts(record: dict) -> list[str]:
    """The program teacher's attempts for one refund prompt: one that follows the policy, one
    that breaks it (refund without a lookup; invent an id)."""
    from recipes.grpo.reward import LOOKUP_TOOL, NO_ID, REFUND_TOOL, WITH_ID

    task, oid = record["task_id"], record["order_id"]
    if record["category"] == WITH_ID:
        return [_call(LOOKUP_TOOL, order_id=oid),
                _call(REFUND_TOOL, order_id=oid, reason="customer request")]
    invented = _call(LOOKUP_TOOL, order_id="A10000")
    if record["category"] == NO_ID:
        return [_pick(_ASK_FOR_ID, task), invented]
    return [_pick(_OFF_TOPIC, task), invented]


def build_refund_demo(folder: str | Path, *, seed: int, share: float) -> SFTData:
    """Write the refund demo's data folder and read it back: the program teacher's attempts,
    graded by the refund reward, through ``split_by_task`` -> ``select_sft`` -> ``decontaminate``
    -> ``export_sft``."""
    from recipes.grpo.prompts import write_prompts
    from recipes.grpo.reward import Case, score
    from whileai_core import (decontaminate, export_sft, freeze_holdout, select_sft,
                              split_by_task)
    from whileai_core.io import write_atomic
    from whileai_core.traces import prompt_messages

    from recipes.defaults import SFT_DEMO_ATTEMPTS

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    records = write_prompts(seed)
    traces = []
    for record in records:
        case = Case(record["category"], record["order_id"] or None)
        for i, reply in enumerate(demo_attempts(record)[:SFT_DEMO_ATTEMPTS]):
            traces.append({"task_id": record["task_id"], "category": record["category"],
                           "order_id": record["order_id"], "attempt": i,
                           "messages": record["prompt"] + [{"role": "assistant", "content": reply}],
                           "reward": score(reply, case)})
    split = split_by_task(traces, share=share, seed=seed)
    chosen = select_sft(split.train(traces))
    clean = decontaminate(chosen.records, split.holdout(traces))
    export_sft(clean.records, folder / TRAIN_FILE, overwrite=True)
    held = [{"task_id": t["task_id"], "category": t["category"], "order_id": t["order_id"],
             "messages": prompt_messages(t)} for t in split.holdout(traces) if t["attempt"] == 0]
    for stale in folder.glob(HOLDOUT_GLOB):
        stale.unlink()
    freeze_holdout(held, folder)
    write_atomic(folder / GRADER_FILE, REFUND_GRADER.read_text(encoding="utf-8"), overwrite=True)
    data = read_data(folder)
    demo = {"prompts": len(records), "attempts": len(traces),
            "holdout_tasks": len(split.holdout_tasks), "train_tasks": len(split.train_tasks),
            "kept": chosen.n_kept, "decontaminated_out": clean.n_in - clean.n_kept,
            "teacher": "a program that follows the refund policy (the demo's stand-in for a "
                       "stronger model)"}
    return SFTData(**{**asdict(data), "origin": f"refund demo (seed {seed}) in {folder}",
                      "demo": demo})
