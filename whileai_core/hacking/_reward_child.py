"""The child process every reward runs in: ``python -I _reward_child.py SPEC``.

It is started by file path with ``-I`` (isolated: no ``PYTHON*`` variable, no user site, neither
the script's folder nor the working directory on ``sys.path``) and imports nothing but the
standard library, before any user code runs. SPEC is one JSON object the parent builds:

- ``code_fd``: a descriptor holding the reward's source, the bytes the parent read through the
  path door (the file is never opened here by name; ``file`` only names it in tracebacks);
- ``memory_mb``: the address-space limit set here first (``RLIMIT_AS``), so the reward cannot
  take the machine's memory;
- ``root``: appended *last* to ``sys.path``, so the reward imports its neighbours but a file in
  the root can never shadow the standard library or an installed package (an in-root
  ``contextlib.py`` used to run on every probe);
- ``mode`` ``"module"``: the source defines ``function``; the batch is JSONL on stdin; stdout
  carries one JSON array of rewards and nothing else (the reward's own prints go to stderr);
- ``mode`` ``"script"``: the source runs as ``__main__`` with ``sys.argv = [file, *args]``; it
  reads the batch on stdin and prints the rewards itself.

Any failure is a traceback on stderr and a non-zero exit status.
"""

import contextlib
import json
import os
import sys


def _limit_memory(megabytes: int) -> None:
    try:
        import resource

        size = int(megabytes) << 20
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    except (ImportError, ValueError, OSError):  # a platform without RLIMIT_AS: the timeout holds
        pass


def _source(fd: int) -> str:
    chunks = []
    while True:
        data = os.read(fd, 1 << 20)
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    return b"".join(chunks).decode("utf-8")


NO_FUNCTION = 3  # the exit status when the file defines no such function (reward.py reads it)


def main(argv: list) -> int:
    spec = json.loads(argv[0])
    _limit_memory(spec["memory_mb"])
    code = _source(int(spec["code_fd"]))
    sys.path.append(spec["root"])
    file = spec["file"]
    compiled = compile(code, file, "exec")
    if spec["mode"] == "script":
        sys.argv = [file, *spec["args"]]
        namespace = {"__name__": "__main__", "__file__": file, "__builtins__": __builtins__}
        exec(compiled, namespace)  # noqa: S102 - the user's reward, asked for by name
        return 0
    items = [json.loads(line) for line in sys.stdin if line.strip()]
    with contextlib.redirect_stdout(sys.stderr):
        import importlib.util

        module_spec = importlib.util.spec_from_loader("_whileai_user_reward", loader=None,
                                                      origin=file)
        module = importlib.util.module_from_spec(module_spec)
        module.__file__ = file
        sys.modules[module_spec.name] = module
        exec(compiled, module.__dict__)  # noqa: S102 - the user's reward, asked for by name
        fn = getattr(module, spec["function"], None)
        if not callable(fn):  # the parent names it with the close one, no traceback
            sys.__stdout__.write(json.dumps({"no_function": spec["function"], "defined": sorted(
                k for k, v in vars(module).items() if callable(v) and not k.startswith("_"))}))
            return NO_FUNCTION
        names = dict.fromkeys(k for it in items for k in it if k not in ("prompt", "completion"))
        columns = {k: [it.get(k) for it in items] for k in names}
        rewards = fn(prompts=[it.get("prompt") for it in items],
                     completions=[it.get("completion") for it in items], **columns)
    sys.stdout.write(json.dumps([r if r is None or isinstance(r, (int, float)) else str(r)
                                 for r in list(rewards)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
