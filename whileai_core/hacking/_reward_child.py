"""The process every reward runs in: ``python -I _reward_child.py SPEC``.

It is started by file path with ``-I`` (isolated: no ``PYTHON*`` variable, no user site, neither
the script's folder nor the working directory on ``sys.path``) and imports nothing but the
standard library and ``whileai_core/confine.py`` (loaded by its path) before any user code runs.
SPEC is one JSON object the parent builds:

- ``code_fd``: a descriptor holding the reward's source, the bytes the parent read through the
  path door (the file is never opened here by name; ``file`` only names it in tracebacks);
- ``report_fd``: where this process reports, one JSON object a line: ``{"raised": ...}`` (the
  reward's exception: its type, where it was raised, and its message only for
  ``SHOWN_MESSAGES``), ``{"no_function": ...}``, and ``{"ended": how, "killed": n}``;
- ``memory_mb``: the address-space limit (``RLIMIT_AS``); ``timeout_s`` and ``processes``: below;
- ``root``: appended *last* to ``sys.path``, so the reward imports its neighbours but a file in
  the root never shadows the standard library or an installed package;
- ``mode`` ``"module"``: the source defines ``function``; the batch is JSONL on stdin; stdout
  carries one JSON array of rewards and nothing else (the reward's own prints go to stderr);
- ``mode`` ``"script"``: the source runs as ``__main__`` with ``sys.argv = [file]``; it reads the
  batch on stdin and prints the rewards itself.

The worker that runs the reward is held as ``confine.contain`` does: in namespaces of its own
where the kernel allows it, under a supervisor with no privilege and a process limit
(``processes`` more tasks than the user has now); when the worker ends, passes ``timeout_s`` or
starts more than ``processes`` processes, every process the reward left is killed, ``setsid``'d
grandchildren included. The end is written on the report descriptor. Exit status: the worker's,
or ``TIMED_OUT`` / ``TOO_MANY`` / ``STOPPED`` / ``NOT_STARTED``.
"""

import contextlib
import importlib.util
import json
import os
import sys
import traceback

NO_FUNCTION, TIMED_OUT, TOO_MANY, STOPPED, NOT_STARTED = 3, 124, 125, 126, 127

# the interpreter's own errors about code: their message names code (a name, a module, a
# type), never data the reward read, so it is shown; any other message is not (it can hold what
# the reward read: a file's contents, a key)
SHOWN_MESSAGES = frozenset({
    "SyntaxError", "IndentationError", "TabError", "NameError", "UnboundLocalError",
    "ImportError", "ModuleNotFoundError", "AttributeError", "TypeError", "ZeroDivisionError",
    "RecursionError", "MemoryError", "NotImplementedError"})


def _confine():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "confine.py")
    spec = importlib.util.spec_from_file_location("_whileai_confine", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _source(fd: int) -> str:
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode("utf-8")


def _report(fd: int, **fields) -> None:
    data = (json.dumps(fields) + "\n").encode()
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:  # the parent stopped reading: nothing more to say
        pass


def _raised(exc: BaseException, file: str) -> dict:
    """What the parent may show of the reward's exception: its type, the innermost place in the
    reward's own file (else the innermost place at all), and the message for SHOWN_MESSAGES."""
    kind = type(exc)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename == file] or frames[-1:]
    where = None
    if isinstance(exc, SyntaxError) and exc.filename == file:
        where = [file, exc.lineno, None]
    elif own:
        where = [own[-1].filename, own[-1].lineno, own[-1].name]
    shown = name in SHOWN_MESSAGES
    message = (exc.msg if isinstance(exc, SyntaxError) else str(exc)) if shown else None
    return {"raised": name[:200], "at": where, "message": None if message is None
            else message[:300]}


def _work(spec: dict, code: str) -> int:
    """The reward itself (in the worker): its exit status."""
    file, report = spec["file"], int(spec["report_fd"])
    sys.path.append(spec["root"])
    try:
        compiled = compile(code, file, "exec")
        if spec["mode"] == "script":
            sys.argv = [file]
            namespace = {"__name__": "__main__", "__file__": file, "__builtins__": __builtins__}
            exec(compiled, namespace)  # noqa: S102 - the user's reward, asked for by name
            return 0
        items = [json.loads(line) for line in sys.stdin if line.strip()]
        with contextlib.redirect_stdout(sys.stderr):
            module_spec = importlib.util.spec_from_loader("_whileai_user_reward", loader=None,
                                                          origin=file)
            module = importlib.util.module_from_spec(module_spec)
            module.__file__ = file
            sys.modules[module_spec.name] = module
            exec(compiled, module.__dict__)  # noqa: S102 - the user's reward, asked for by name
            fn = getattr(module, spec["function"], None)
            if not callable(fn):  # the parent names it with the close one, no traceback
                _report(report, no_function=spec["function"], defined=sorted(
                    k for k, v in vars(module).items() if callable(v) and not k.startswith("_")))
                return NO_FUNCTION
            names = dict.fromkeys(k for it in items for k in it if k not in ("prompt", "completion"))
            columns = {k: [it.get(k) for it in items] for k in names}
            rewards = fn(prompts=[it.get("prompt") for it in items],
                         completions=[it.get("completion") for it in items], **columns)
            rewards = [r if r is None or isinstance(r, (int, float)) else str(r)
                       for r in list(rewards)]
        sys.stdout.write(json.dumps(rewards))
        return 0
    except SystemExit as exc:
        code_ = exc.code
        return code_ if isinstance(code_, int) else (0 if code_ is None else 1)
    except BaseException as exc:  # noqa: BLE001 - the reward's failure, reported for the parent
        traceback.print_exc()  # for whoever runs it by hand; the parent only counts stderr
        _report(report, **_raised(exc, file))
        return 1


def main(argv: list) -> int:
    spec = json.loads(argv[0])
    confine = _confine()
    report = int(spec["report_fd"])
    code = _source(int(spec["code_fd"]))

    def start() -> int:
        worker = os.fork()
        if worker == 0:  # the worker: the memory limit, then the reward
            status = 1
            try:
                confine.forget()
                confine.limit_memory(spec["memory_mb"])
                status = _work(spec, code)
            finally:
                with contextlib.suppress(Exception):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(status & 0xFF if status >= 0 else 1)
        return worker

    outcome = confine.contain(start, timeout_s=float(spec["timeout_s"]),
                              max_processes=int(spec["processes"]))
    _report(report, ended=outcome.how, killed=outcome.killed, isolated=outcome.isolated,
            error=outcome.error)
    if outcome.how == confine.EXITED:  # a signal -N is 128 + N, as a shell says it
        status = outcome.code if outcome.code is not None else 1
        return status if status >= 0 else 128 - status
    return {confine.TIMED_OUT: TIMED_OUT, confine.TOO_MANY: TOO_MANY, confine.STOPPED: STOPPED,
            confine.NOT_STARTED: NOT_STARTED}[outcome.how]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
