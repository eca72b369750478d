"""Child process of a ``module:function`` reward: import it, score the JSONL on stdin, print JSON.

Run as ``python -m whileai_core.hacking._reward_child ROOT FILE FUNCTION``. ROOT goes first on
``sys.path`` so the reward's own imports of its neighbours work. The first line of stdin is the
module's source as a JSON string (the parent read it through the path door); it runs under a
private module name with ``__file__`` = FILE, which is never opened here. stdout carries one JSON array of rewards and nothing else (the reward's own prints are sent
to stderr); any failure is a traceback on stderr and exit status 1.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys


def main(argv: list[str]) -> int:
    root, file, function = argv
    sys.path.insert(0, root)
    code = json.loads(sys.stdin.readline())
    items = [json.loads(line) for line in sys.stdin if line.strip()]
    with contextlib.redirect_stdout(sys.stderr):
        spec = importlib.util.spec_from_loader("_whileai_user_reward", loader=None, origin=file)
        module = importlib.util.module_from_spec(spec)
        module.__file__ = file
        sys.modules[spec.name] = module
        exec(compile(code, file, "exec"), module.__dict__)  # noqa: S102 - the user's reward
        fn = getattr(module, function)
        names = dict.fromkeys(k for it in items for k in it if k not in ("prompt", "completion"))
        columns = {k: [it.get(k) for it in items] for k in names}
        rewards = fn(prompts=[it.get("prompt") for it in items],
                     completions=[it.get("completion") for it in items], **columns)
    sys.stdout.write(json.dumps([r if r is None or isinstance(r, (int, float)) else str(r)
                                 for r in list(rewards)]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
