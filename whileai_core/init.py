"""Wire a project to the skill pack: the MCP server entry each agent host reads, the skills where
hosts look for them, and a short marked section in ``AGENTS.md``.

Host formats, as each host documents them:

- Claude Code: ``.mcp.json`` at the project root, ``{"mcpServers": {name: {"command", "args"}}}``;
  project skills in ``.claude/skills/<name>/SKILL.md`` [1].
- Cursor: ``.cursor/mcp.json``, the same ``mcpServers`` shape [2].
- VS Code: ``.vscode/mcp.json``, ``{"servers": {name: {"type": "stdio", "command", "args"}}}`` [3].
- Codex: TOML tables ``[mcp_servers.<name>]`` with ``command`` and ``args``, read from
  ``~/.codex/config.toml`` and, in a trusted project only, from ``.codex/config.toml`` [4].
- Codex, Cursor and VS Code read project skills from ``.agents/skills/<name>/SKILL.md`` [4, 5].

Nothing the user has is overwritten. Every change is planned first; if any file cannot be merged
(malformed JSON or TOML, an entry of the same name that differs, a skill file that differs, a
symlink that leads out of the project) init refuses and writes nothing, naming each file (and
line). A merge keeps
every other key of the file. Running init again changes nothing.

Why one module of ~500 lines: one plan collects every change (host entries, skills, AGENTS.md)
before anything is written, so the all-or-nothing refusal is decided in one place.

References
----------
[1] Claude Code docs: MCP (project scope, ``.mcp.json``) and Agent Skills (``.claude/skills``).
[2] Cursor docs: MCP (``.cursor/mcp.json``, ``mcpServers``).
[3] VS Code docs: MCP configuration reference (``.vscode/mcp.json``, ``servers``, ``type``).
[4] Codex docs: Config basics (project ``.codex/config.toml``, trusted projects), MCP, Agent Skills
    (``.agents/skills``).
[5] VS Code docs: Agent Skills.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from .defaults import AGENTS_SECTION_BEGIN, AGENTS_SECTION_END, INIT_SERVER_NAME
from .errors import ArgumentError, ConfigError
from .result import Result
from . import safejson
from .skills import SKILLS_ENV, default_skills_dir, shipped
from .voice import arg

HostName = Literal["claude", "cursor", "vscode", "codex"]
Action = Literal["create", "update", "unchanged", "link"]



@dataclass(frozen=True)
class Host:
    """One agent host: where it reads MCP servers and skills, and what shows it is in use."""

    name: HostName
    label: str
    config: str                 # relative to the project root
    fmt: Literal["json", "toml"]
    key: str                    # the table of servers in that file
    skills: str                 # where it reads project skills
    signs: tuple[str, ...]      # files or folders whose presence means the host is used here
    stdio_type: bool = False    # the entry names its transport ("type": "stdio")


HOSTS: dict[str, Host] = {h.name: h for h in (
    Host("claude", "Claude Code", ".mcp.json", "json", "mcpServers", ".claude/skills",
         (".mcp.json", ".claude", "CLAUDE.md")),
    Host("cursor", "Cursor", ".cursor/mcp.json", "json", "mcpServers", ".agents/skills",
         (".cursor",)),
    Host("vscode", "VS Code", ".vscode/mcp.json", "json", "servers", ".agents/skills",
         (".vscode",), stdio_type=True),
    Host("codex", "Codex", ".codex/config.toml", "toml", "mcp_servers", ".agents/skills",
         (".codex",)),
)}


# --- results -------------------------------------------------------------------------------

class InitAction(Result):
    """One file or folder init writes (or would write, or leaves as it is)."""

    path: str                   # relative to the project root
    action: Action
    what: str
    content: str | None = None  # the whole new text of a config file or AGENTS.md

    def render(self) -> str:
        return f"{self.action:9}  {self.path:40}  {self.what}"


class InitResult(Result):
    """What init did (or, with ``dry_run``, would do) in ``root``."""

    root: str
    hosts: list[str]
    found: dict[str, str]       # host -> why it was chosen ("found .vscode" or "asked")
    dry_run: bool
    actions: list[InitAction]
    server: dict[str, Any]      # the server entry written for every host
    notes: list[str] = []

    @property
    def changed(self) -> int:
        return sum(a.action != "unchanged" for a in self.actions)

    def render(self) -> str:
        head = "dry run, nothing written: " if self.dry_run else ""
        why = ", ".join(f"{h} ({self.found[h]})" for h in self.hosts)
        lines = [f"{head}whileai-skills init {self.root}", f"hosts: {why}"]
        for a in self.actions:
            lines.append("  " + a.render())
            if self.dry_run and a.content is not None and a.action != "unchanged":
                lines += ["      | " + ln for ln in a.content.rstrip("\n").split("\n")]
        verb = "would change" if self.dry_run else "changed"
        lines.append(f"{verb} {self.changed} of {len(self.actions)}"
                     + ("" if self.changed else ": already set up, nothing to do"))
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


# --- planning ------------------------------------------------------------------------------

@dataclass
class _Plan:
    root: Path
    actions: list[InitAction] = field(default_factory=list)
    writes: list[tuple[Path, bytes, bool]] = field(default_factory=list)  # path, data, replace
    links: list[tuple[Path, Path]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def refuse(self, path: Path, problem: str) -> None:
        self.problems.append(f"{self.rel(path)}: {problem}")


def bundled_skills_dir() -> Path:
    """The skills init installs by default: ``whileai_core.skills.default_skills_dir`` (the
    same folder the MCP server serves)."""
    return default_skills_dir()


def default_server_command() -> str:
    """The ``whileai-mcp`` beside the running Python (its venv), else the one on PATH."""
    beside = Path(sys.executable).with_name("whileai-mcp")
    if beside.is_file():
        return str(beside.absolute())
    found = shutil.which("whileai-mcp")
    if found:
        return str(Path(found).absolute())
    raise ArgumentError("no `whileai-mcp` beside this Python or on PATH. Fix: install the package "
                        "(pip install -e .) or pass "
                        + arg("command", "/path/to/whileai-mcp", op="init_project"))


def _hosts(root: Path, hosts: list[str] | None) -> dict[str, str]:
    if hosts:
        bad = [h for h in hosts if h not in HOSTS and h != "all"]
        if bad:
            raise ArgumentError(f"unknown host {bad[0]!r}; known: {', '.join(HOSTS)} or 'all'. "
                                f"Fix: e.g. {arg('hosts', ['claude', 'vscode'], op='init_project')}")
        if "all" in hosts:
            return {h: "asked" for h in HOSTS}
        return {h: "asked" for h in HOSTS if h in hosts}
    found = {}
    for host in HOSTS.values():
        sign = next((s for s in host.signs if (root / s).exists()), None)
        if sign is not None:
            found[host.name] = f"found {sign}"
    if not found:
        raise ArgumentError(f"no agent host found in {root} (looked for "
                            f"{', '.join(s for h in HOSTS.values() for s in h.signs)}). Fix: "
                            f"name one or more with {arg('hosts', op='init_project')} (claude, "
                            "cursor, vscode, codex), or all")
    return found


def _link_inside(plan: _Plan, path: Path) -> bool:
    """Refuse (and say so) when ``path`` leads out of the root through a symlink.

    A link that stays inside the root (``.claude/skills -> ../.agents/skills`` is a common
    layout) is followed: the write lands where it points.
    """
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        plan.refuse(path, f"cannot be resolved ({exc}). Fix: remove the broken link")
        return True
    if not real.is_relative_to(plan.root):
        plan.refuse(path, f"leads out of {plan.root} through a symlink (to {real}); init "
                          "writes only inside the project. Fix: replace the link with a plain "
                          "file or folder, or leave this host out "
                          f"({arg('hosts', op='init_project')})")
        return True
    return False


def _check_folders(plan: _Plan, path: Path) -> None:
    """Refuse, while planning, a path whose folder is in fact a file, a FIFO or a device: found
    only when writing, it left the files written before it (a half-done init)."""
    folder = plan.root
    for part in path.relative_to(plan.root).parts[:-1]:
        folder = folder / part
        if folder.is_dir():  # a link inside the root was allowed by _link_inside
            continue
        if folder.is_symlink() or folder.exists():
            what = "a broken symlink" if folder.is_symlink() and not folder.exists() else (
                "a file" if folder.is_file() else "not a folder (a FIFO, socket or device)")
            problem = (f"is {what}, where init needs a folder. Fix: remove or rename it, or "
                       f"leave this host out ({arg('hosts', op='init_project')})")
            if f"{plan.rel(folder)}: {problem}" not in plan.problems:
                plan.refuse(folder, problem)
        return


def _read(plan: _Plan, path: Path, what: str = "config") -> str | None:
    """The file's text through the path door (regular files only, size-limited), or None after
    a refusal naming it."""
    from .errors import WhileaiError
    from .safepath import read_text

    try:
        return read_text(path, what, argument=plan.rel(path), error=ConfigError,
                         fix="make it a readable UTF-8 file")
    except WhileaiError as err:
        plan.problems.append(str(err))
        return None


def _entry(host: Host, command: str, args: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio"} if host.stdio_type else {}
    entry.update(command=command, args=list(args))
    return entry


def _indent(text: str) -> int | str:
    """The indent of the first indented line, so a merged file keeps its own style."""
    match = re.search(r"^([ \t]+)\S", text, re.M)
    if not match:
        return 2
    ws = match.group(1)
    return "\t" if ws.startswith("\t") else len(ws)


def _plan_json(plan: _Plan, host: Host, entry: dict[str, Any]) -> None:
    path = plan.root / host.config
    what = f"MCP server `{INIT_SERVER_NAME}` for {host.label}"
    if _link_inside(plan, path):
        return
    snippet = json.dumps({host.key: {INIT_SERVER_NAME: entry}})
    if not path.exists():
        text = json.dumps({host.key: {INIT_SERVER_NAME: entry}}, indent=2) + "\n"
        plan.actions.append(InitAction(path=host.config, action="create", what=what, content=text))
        plan.writes.append((path, text.encode(), False))
        return
    old = _read(plan, path)
    if old is None:
        return
    try:
        data = safejson.loads(old) if old.strip() else {}
    except json.JSONDecodeError as exc:
        plan.refuse(path, f"line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg}); init "
                          "does not rewrite a file it cannot parse (comments included). Fix: "
                          f"repair it, or add this entry by hand: {snippet}")
        return
    if not isinstance(data, dict):
        plan.refuse(path, f"is a JSON {type(data).__name__}, expected an object with "
                          f"`{host.key}`. Fix: make it an object, or add the entry by hand")
        return
    servers = data.get(host.key, {})
    if not isinstance(servers, dict):
        plan.refuse(path, f"`{host.key}` is a {type(servers).__name__}, expected an object "
                          "of servers. Fix: make it an object")
        return
    have = servers.get(INIT_SERVER_NAME)
    if have == entry:
        plan.actions.append(InitAction(path=host.config, action="unchanged", what=what))
        return
    if have is not None:
        plan.refuse(path, f"already has a server `{INIT_SERVER_NAME}` that differs "
                          f"({json.dumps(have)}); init will not replace it. Fix: delete that "
                          f"entry and re-run, or keep yours")
        return
    others = len(servers)
    data[host.key] = {**servers, INIT_SERVER_NAME: entry}
    text = json.dumps(data, indent=_indent(old), ensure_ascii=False) + "\n"
    kept = f" (kept {others} other server{'s' if others != 1 else ''})" if others else ""
    plan.actions.append(InitAction(path=host.config, action="update", what=what + kept,
                                   content=text))
    plan.writes.append((path, text.encode(), True))


def _plan_toml(plan: _Plan, host: Host, entry: dict[str, Any]) -> None:
    import tomllib

    import tomli_w

    path = plan.root / host.config
    what = f"MCP server `{INIT_SERVER_NAME}` for {host.label}"
    if _link_inside(plan, path):
        return
    table = tomli_w.dumps({host.key: {INIT_SERVER_NAME: entry}})
    if not path.exists():
        plan.actions.append(InitAction(path=host.config, action="create", what=what, content=table))
        plan.writes.append((path, table.encode(), False))
        return
    old = _read(plan, path)
    if old is None:
        return
    try:
        data = tomllib.loads(old)
    except tomllib.TOMLDecodeError as exc:
        plan.refuse(path, f"invalid TOML ({exc}); init does not rewrite a file it cannot parse. "
                          f"Fix: repair it, or add by hand: {table!r}")
        return
    servers = data.get(host.key, {})
    have = servers.get(INIT_SERVER_NAME) if isinstance(servers, dict) else None
    if have == entry:
        plan.actions.append(InitAction(path=host.config, action="unchanged", what=what))
        return
    if have is not None:
        plan.refuse(path, f"already has [{host.key}.{INIT_SERVER_NAME}] and it differs "
                          f"({have!r}); init will not replace it. Fix: delete that table and "
                          "re-run, or keep yours")
        return
    # appended, not re-serialised: the user's comments and layout stay as they are
    text = old if old.endswith("\n") or not old else old + "\n"
    text += ("\n" if text.strip() else "") + table
    try:
        merged = tomllib.loads(text)[host.key][INIT_SERVER_NAME]
    except (tomllib.TOMLDecodeError, KeyError, TypeError):
        merged = None
    if merged != entry:
        plan.refuse(path, f"`{host.key}` is written in a form a new table cannot extend (an inline "
                          f"table?). Fix: add by hand: {table!r}")
        return
    plan.actions.append(InitAction(path=host.config, action="update", what=what, content=text))
    plan.writes.append((path, text.encode(), True))


def _skill_files(folder: Path) -> list[Path]:
    files = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not shipped(rel.parts):  # the skill's own files, as the server serves them
            continue
        if path.is_file():
            files.append(rel)
    return files


def _plan_skill(plan: _Plan, source: Path, dest: Path, link: bool) -> None:
    from .safepath import user_path

    def read_bytes(path: Path, kind: str, **kw) -> bytes:
        return user_path(path, argument=kw.pop("argument")).read_bytes(kind, **kw)

    name = source.name
    if _link_inside(plan, dest.parent):
        return
    rel = plan.rel(dest) + "/"
    if dest.is_symlink():
        if dest.resolve() == source.resolve():
            plan.actions.append(InitAction(path=rel, action="unchanged",
                                           what=f"skill {name} (linked)"))
        else:
            plan.refuse(dest, f"is a symlink to {os.readlink(dest)}, not to {source}. Fix: "
                              "remove the link to install this skill, or keep yours")
        return
    if link:
        if dest.exists():
            plan.refuse(dest, f"exists (a copy, or your own skill); {arg('link', True)} will not "
                              "replace it. Fix: remove it to link the pack's folder, or run init "
                              f"without {arg('link', True)}")
            return
        plan.actions.append(InitAction(path=rel, action="link", what=f"skill {name} -> {source}"))
        plan.links.append((dest, source))
        return
    files = _skill_files(source)
    new, same = [], 0
    for f in files:
        target = dest / f
        data = read_bytes(source / f, "config", argument=f"skill {name}", error=ConfigError)
        if target.is_symlink() or (target.exists() and not target.is_file()):
            plan.refuse(target, "is not a plain file. Fix: remove it, or keep yours")
            return
        if target.exists():
            if read_bytes(target, "config", argument=plan.rel(target),
                          error=ConfigError) != data:
                plan.refuse(target, f"differs from the pack's {name}/{f.as_posix()} (edited, or an "
                                    "older version); init will not replace it. Fix: delete it "
                                    "to take the pack's version, or keep yours")
                return
            same += 1
        else:
            new.append((target, data, False))
    n = len(files)
    what = f"skill {name} ({n} file{'s' if n != 1 else ''})"
    if not new:
        plan.actions.append(InitAction(path=rel, action="unchanged", what=what))
        return
    action: Action = "update" if same else "create"
    plan.actions.append(InitAction(path=rel, action=action, what=what))
    plan.writes.extend(new)


def agents_section(skill_dirs: list[str], names: list[str]) -> str:
    """The marked AGENTS.md section: where the skills are and how to start."""
    import textwrap

    where = " and ".join(f"`{d}/`" for d in skill_dirs)
    intro = (f"Playbooks for deciding how to post-train an open-weight model live in {where}, one "
             "folder per skill (read its `SKILL.md`). The MCP server "
             f"`{INIT_SERVER_NAME}` gives every step as a tool (`list_skills`, `get_skill`, then "
             "the tools each skill names).")
    first = [n for n in ("strengthen-your-evals", "pick-a-method") if n in names]
    order = (f"Before any training, start with {', then '.join(f'`{n}`' for n in first)}. "
             if first else "")
    close = order + "Report every pass rate with its 95% interval and n."
    return "\n".join([AGENTS_SECTION_BEGIN, "## Post-training with the whileai skill pack", "",
                      textwrap.fill(intro, 99), "", *[f"- `{n}`" for n in names], "",
                      textwrap.fill(close, 99), AGENTS_SECTION_END]) + "\n"


def _plan_agents_md(plan: _Plan, section: str) -> None:
    path = plan.root / "AGENTS.md"
    what = "whileai section (between its markers)"
    if _link_inside(plan, path):
        return
    if not path.exists():
        plan.actions.append(InitAction(path="AGENTS.md", action="create", what=what,
                                       content=section))
        plan.writes.append((path, section.encode(), False))
        return
    old = _read(plan, path)
    if old is None:
        return
    lines = old.split("\n")
    begins = [i for i, ln in enumerate(lines) if ln.strip() == AGENTS_SECTION_BEGIN]
    ends = [i for i, ln in enumerate(lines) if ln.strip() == AGENTS_SECTION_END]
    if not begins and not ends:
        sep = "" if not old.strip() else ("\n" if old.endswith("\n") else "\n\n")
        text = old + sep + section if old.strip() else section
        plan.actions.append(InitAction(path="AGENTS.md", action="update", what=what,
                                       content=text))
        plan.writes.append((path, text.encode(), True))
        return
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        marks = ", ".join(f"line {i + 1}" for i in sorted(begins + ends))
        plan.refuse(path, f"its whileai markers are out of order or repeated ({marks}); init "
                          f"replaces exactly one section from {AGENTS_SECTION_BEGIN} to "
                          f"{AGENTS_SECTION_END}. Fix: keep one pair, begin before end")
        return
    b, e = begins[0], ends[0]
    text = "\n".join(lines[:b]) + ("\n" if b else "") + section + "\n".join(lines[e + 1:])
    if text == old:
        plan.actions.append(InitAction(path="AGENTS.md", action="unchanged", what=what))
        return
    plan.actions.append(InitAction(path="AGENTS.md", action="update", what=what, content=text))
    plan.writes.append((path, text.encode(), True))


# --- the command ---------------------------------------------------------------------------

def init_project(root: str | os.PathLike = ".", *, hosts: list[str] | None = None,
                 dry_run: bool = False, link: bool = False, command: str | None = None,
                 skills_dir: str | os.PathLike | None = None) -> InitResult:
    """Write the MCP server entry, the skills and the AGENTS.md section for a project's hosts.

    ``hosts``: names from :data:`HOSTS` (or ``["all"]``); default: the hosts whose files or
    folders are in ``root``. ``link``: symlink the skill folders to the pack's instead of copying.
    ``command``: the server executable (default :func:`default_server_command`). ``dry_run``:
    plan and report, write nothing. Raises :class:`ConfigError` (nothing written) when any file
    cannot be merged, naming each.
    """
    base = Path(root).expanduser()
    if not base.is_dir():
        raise ArgumentError(f"{str(root)!r} is not a folder. Fix: pass the project's root folder "
                            "(default: the current directory)")
    base = base.resolve()
    chosen = _hosts(base, hosts)
    source = Path(skills_dir).expanduser() if skills_dir is not None else bundled_skills_dir()
    skills = sorted(p.parent for p in source.glob("*/SKILL.md")) if source.is_dir() else []
    if not skills:
        raise ArgumentError(f"no skills found in {source} (no */SKILL.md). Fix: pass "
                            f"{arg('skills_dir', op='init_project')} or set {SKILLS_ENV} to the "
                            "pack's skills folder")
    cmd = command if command is not None else default_server_command()
    args = ["--root", str(base)]
    plan = _Plan(root=base)
    for name in chosen:
        host = HOSTS[name]
        entry = _entry(host, cmd, args)
        (_plan_json if host.fmt == "json" else _plan_toml)(plan, host, entry)
    skill_dirs = list(dict.fromkeys(HOSTS[h].skills for h in chosen))
    for folder in skill_dirs:
        for skill in skills:
            _plan_skill(plan, skill, base / folder / skill.name, link)
    _plan_agents_md(plan, agents_section(skill_dirs, [s.name for s in skills]))
    for path in [p for p, _, _ in plan.writes] + [d for d, _ in plan.links]:
        _check_folders(plan, path)
    planned: dict[Path, bytes] = {}
    for path, data, _ in plan.writes:  # two folders may be one (a link): one write each
        if planned.setdefault(path.resolve(), data) != data:
            plan.refuse(path, "is reached twice through links with different content. Fix: "
                              f"choose one host ({arg('hosts', op='init_project')})")
    if plan.problems:
        raise ConfigError(f"init changed nothing in {base}: " + "; ".join(plan.problems))
    notes = []
    if "codex" in chosen:
        notes.append("Codex reads .codex/config.toml only in a trusted project; otherwise put the "
                     "same [mcp_servers.whileai] table in ~/.codex/config.toml")
    if not dry_run:
        from .io import write_atomic

        done: set[Path] = set()
        for path, data, replace in plan.writes:
            real = path.resolve()  # inside the root: checked while planning
            if real not in done:
                done.add(real)
                write_atomic(real, data, overwrite=replace)
        for dest, target in plan.links:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(target.resolve(), target_is_directory=True)
    return InitResult(root=str(base), hosts=list(chosen), found=chosen, dry_run=dry_run,
                      actions=plan.actions, server={"command": cmd, "args": args}, notes=notes)
