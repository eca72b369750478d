"""Wire a project to the skill pack: the MCP server entry each agent host reads, the skills where
hosts look for them, a marked section in ``AGENTS.md``, and an ``@AGENTS.md`` import in an
existing ``CLAUDE.md``. Host formats as each host documents them:

- Claude Code: ``.mcp.json``, ``{"mcpServers": {name: {"command", "args"}}}`` [1]; skills in
  ``.claude/skills/`` [2]; ``CLAUDE.md`` imports a file with a line ``@path`` [3]. It starts
  servers in the project folder, so ``--root .`` works.
- Cursor: ``.cursor/mcp.json``, the same shape, ``${workspaceFolder}`` expanded [4]; skills in
  ``.agents/skills/`` [5].
- VS Code: ``.vscode/mcp.json`` (JSONC), ``{"servers": {name: {"type": "stdio", ...}}}`` [6];
  skills in ``.github/skills/`` [7]; Copilot also reads ``.mcp.json`` [6].
- Codex: ``[mcp_servers.<name>]`` in ``~/.codex/config.toml`` or a trusted project's
  ``.codex/config.toml`` [8]; skills in ``.agents/skills/`` [8].

What is written can be committed: no absolute path of this machine (the server is a venv's
``whileai-mcp`` inside the project, by relative path, else ``whileai-mcp`` on the PATH; never
uv's cache). Nothing is overwritten: every change is planned first, and if any file cannot be
merged init writes nothing, naming each file. A merge keeps every other byte of the file. The
writes go through the door (``whileai_core.safepath``), all staged before any is put in place
(``whileai_core.staged``). Running init again changes nothing.

[1] Claude Code docs, "Connect Claude Code to tools via MCP". [2] Claude Code docs, "Agent
Skills". [3] Claude Code docs, "Manage Claude's memory". [4] Cursor docs, "Model Context
Protocol". [5] Cursor docs, "Agent Skills". [6] VS Code docs, "MCP configuration reference".
[7] VS Code docs, "Agent Skills reference". [8] Codex docs: "Config basics", "MCP", "Agent
Skills".
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import tomli_w
from pydantic import Field

from . import jsonc
from .bundled import (SKILLS_ENV, SKIP_NAMES, SkillsSource, in_a_cache, running_from_a_cache,
                      skill_files)
from .defaults import AGENTS_SECTION_BEGIN, AGENTS_SECTION_END, INIT_SERVER_NAME
from .errors import ArgumentError, ConfigError, WhileaiError
from .operations import WRITES_NEW, operation
from .operations.args import Arg
from .result import Result
from .safepath import Root
from .staged import StagedFile, put_in_place
from .voice import arg, call

HostName = Literal["claude", "cursor", "vscode", "codex"]
Action = Literal["create", "update", "unchanged", "link"]
SERVER_PROGRAM = "whileai-mcp"

# the Agent Skills name grammar (agentskills.io specification, `name`): what AGENTS.md may list
_SKILL_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
_SKILL_NAME_MAX = 64
_WORKSPACE = "${workspaceFolder}"


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
    comments: bool = False      # the config file is JSONC (comments, trailing commas)
    project: str = "."          # the project folder in an entry: "." or the host's variable


HOSTS: dict[str, Host] = {h.name: h for h in (
    Host("claude", "Claude Code", ".mcp.json", "json", "mcpServers", ".claude/skills",
         (".mcp.json", ".claude", "CLAUDE.md")),
    Host("cursor", "Cursor", ".cursor/mcp.json", "json", "mcpServers", ".agents/skills",
         (".cursor",), project=_WORKSPACE),
    Host("vscode", "VS Code", ".vscode/mcp.json", "json", "servers", ".github/skills",
         (".vscode",), stdio_type=True, comments=True, project=_WORKSPACE),
    Host("codex", "Codex", ".codex/config.toml", "toml", "mcp_servers", ".agents/skills",
         (".codex",)),
)}
# with no host found: the portable file, which Claude Code and VS Code's Copilot both read [1, 6]
FALLBACK_HOST = "claude"
HostChoice = HostName | Literal["all"]  # init_project's `hosts`: a host, or every one


# --- results -------------------------------------------------------------------------------

class InitAction(Result):
    """One file or folder init writes (or would write, or leaves as it is)."""

    path: str                   # relative to the project root
    action: Action
    what: str
    content: str | None = None  # the whole new text of a config file, AGENTS.md or CLAUDE.md

    def render(self) -> str:
        return f"{self.action:9}  {self.path:40}  {self.what}"


class InitResult(Result):
    """What init did (or, with ``dry_run``, would do) in ``root``."""

    root: str
    hosts: list[str]
    found: dict[str, str]       # host -> why it was chosen ("found .vscode", "asked", ...)
    dry_run: bool
    actions: list[InitAction]
    server: dict[str, Any]      # the server entry as a host that starts in the project reads it
    entries: dict[str, dict[str, Any]] = {}  # host -> the entry written in its config
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
                lines += ["      | " + ln for ln in a.content.rstrip("\r\n").split("\n")]
        verb = "would change" if self.dry_run else "changed"
        lines.append(f"{verb} {self.changed} of {len(self.actions)}"
                     + ("" if self.changed else ": already set up, nothing to do"))
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


# --- planning ------------------------------------------------------------------------------

@dataclass
class _Plan:
    root: Path
    door: Any                   # a confined safepath.Root on the project
    actions: list[InitAction] = field(default_factory=list)
    writes: list[StagedFile] = field(default_factory=list)
    links: list[tuple[str, Path]] = field(default_factory=list)   # (rel, target folder)
    folders: set[str] = field(default_factory=set)   # the folders found on the writes' paths
    problems: list[str] = field(default_factory=list)

    def refuse(self, rel: str, problem: str) -> None:
        line = f"{rel}: {problem}"
        if line not in self.problems:
            self.problems.append(line)

    def kind(self, rel: str) -> str | None:
        """"file", "dir", "link", "special" or None, looked at through the door."""
        return self.door.locate(rel, argument=rel).kind()

    def target(self, rel: str) -> str | None:
        """Where ``rel`` lands, relative to the root: a link inside the project is followed; one
        that leads out, or nowhere, is refused (None)."""
        here = self.root
        for part in Path(rel).parts:
            here = here / part
            if here.is_symlink():
                try:
                    real = here.resolve(strict=True)
                except (OSError, RuntimeError):
                    self.refuse(self._rel(here), "is a broken symlink, where init needs a file "
                                "or folder. Fix: remove the link, or leave this host out "
                                f"({arg('hosts', op='init_project')})")
                    return None
                if not real.is_relative_to(self.root):
                    self.refuse(self._rel(here), f"leads out of {self.root} through a symlink "
                                f"(to {real}); init writes only inside the project. Fix: replace "
                                "the link with a plain file or folder, or leave this host out "
                                f"({arg('hosts', op='init_project')})")
                    return None
                here = real
        return self._rel(here)

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def read(self, rel: str) -> str | None:
        """The file's text through the door (a regular file, no link, size-limited), or None
        after a refusal naming it."""
        data = self.read_bytes(rel)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            self.refuse(rel, f"is not UTF-8 text (byte {exc.start}). Fix: save it as UTF-8")
            return None

    def read_bytes(self, rel: str) -> bytes | None:
        try:
            return bytes(self.door.locate(rel, argument=rel).read_bytes(
                "config", error=ConfigError))
        except WhileaiError as err:
            self.problems.append(str(err))
            return None

    def write(self, rel: str, text: str | bytes, old: str | None, action: Action, what: str,
              shown: str | None = None) -> None:
        data = text.encode("utf-8") if isinstance(text, str) else text
        self.writes.append(StagedFile(rel, data, None if old is None else old.encode("utf-8")))
        self.actions.append(InitAction(path=shown or rel, action=action, what=what,
                                       content=text if isinstance(text, str) else None))


def bundled_skills_dir() -> Path:
    """``$WHILEAI_SKILLS_DIR`` if set, else the checkout's ``skills/``, else the installed
    package's copy (see ``whileai_core.bundled``)."""
    return SkillsSource().folder


@dataclass(frozen=True)
class ServerCommand:
    """The server program an entry runs: ``relative`` to the project (a venv inside it), or a
    ``program`` found on the PATH, or ``given`` as the user wrote it."""

    kind: Literal["relative", "program", "given"]
    value: str

    def for_host(self, host: Host) -> str:
        if self.kind != "relative":
            return self.value
        return self.value if host.project == "." else f"{host.project}/{self.value}"


def server_command(root: Path, command: str | None = None) -> tuple[ServerCommand, list[str]]:
    """The program entries run, and notes for the user: ``command`` (relative when inside the
    project), else the ``whileai-mcp`` beside the running Python when that environment is inside
    the project (never uv's cache), else ``whileai-mcp`` on the PATH."""
    notes: list[str] = []

    def inside(path: Path) -> str | None:
        for candidate in (path.absolute(), path.resolve()):
            if candidate.is_relative_to(root):
                return candidate.relative_to(root).as_posix()
        return None

    if command is not None:
        given = Path(command).expanduser()
        rel = inside(given) if given.is_absolute() else None
        if rel is not None:
            return ServerCommand("relative", rel), notes
        if given.is_absolute():
            notes.append(f"the entries run {command}, a path on this machine: a teammate needs "
                         f"the server at the same place (or on the PATH: drop "
                         f"{arg('command', op='init_project')})")
        return ServerCommand("given", command), notes
    beside = Path(sys.executable).with_name(SERVER_PROGRAM)
    if beside.is_file() and not running_from_a_cache():
        rel = inside(beside)
        if rel is not None:
            return ServerCommand("relative", rel), notes
    found = shutil.which(SERVER_PROGRAM)
    active = _active_venv_bin()
    if found is not None and active is not None and not in_a_cache(found) \
            and shutil.which(SERVER_PROGRAM, path=_path_without(active)) is None:
        notes.append(f"the entries run `{SERVER_PROGRAM}`, which resolves here only through the "
                     f"active virtual environment ({active.parent}); a host started outside it "
                     "will not find it: install the pack as a tool (`uv tool install "
                     "whileai-skills` or `pipx install whileai-skills`, or the same with the "
                     "wheel's path), or run init again with "
                     + arg("command", str(active / SERVER_PROGRAM), op="init_project")
                     + " (a path on this machine only)")
    elif found is None or in_a_cache(found):
        where = ("runs from uv's cache (uvx), which uv may delete"
                 if running_from_a_cache() else "is not on the PATH here")
        notes.append(f"the entries run `{SERVER_PROGRAM}`, which {where}: install the pack as a "
                     "tool so hosts find it (`uv tool install whileai-skills` or `pipx install "
                     "whileai-skills`, or the same with the wheel's path), or pass "
                     + arg("command", "PATH", op="init_project"))
    return ServerCommand("program", SERVER_PROGRAM), notes


def _active_venv_bin() -> Path | None:
    """The bin folder of the virtual environment active in this shell (``VIRTUAL_ENV``, or the
    one running this Python with its bin on the PATH), which a host started elsewhere lacks."""
    on_path = [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    venv = os.environ.get("VIRTUAL_ENV")
    candidates = [Path(venv) / "bin", Path(venv) / "Scripts"] if venv else []
    if sys.prefix != sys.base_prefix:
        candidates.append(Path(sys.executable).parent)
    return next((c for c in candidates if c in on_path), None)


def _path_without(folder: Path) -> str:
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p) != folder)


def _hosts(root: Path, hosts: list[str] | None) -> dict[str, str]:
    if hosts:
        bad = [h for h in hosts if h not in HOSTS and h != "all"]
        if bad:
            raise ArgumentError(f"unknown host {bad[0]!r}; known: {', '.join(HOSTS)} or 'all'",
                                fix=f"e.g. {arg('hosts', ['claude', 'vscode'], op='init_project')}")
        if "all" in hosts:
            return {h: "asked" for h in HOSTS}
        return {h: "asked" for h in HOSTS if h in hosts}
    found = {}
    for host in HOSTS.values():
        sign = next((s for s in host.signs if os.path.lexists(root / s)), None)
        if sign is not None:
            found[host.name] = f"found {sign}"
    if not found:
        found[FALLBACK_HOST] = ("no host's files here: the portable .mcp.json, read by Claude Code "
                                "and VS Code")
    return found


def _entry(host: Host, command: ServerCommand) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "stdio"} if host.stdio_type else {}
    entry.update(command=command.for_host(host), args=["--root", host.project])
    return entry


def _plan_host(plan: _Plan, host: Host, entry: dict[str, Any]) -> None:
    """The host's config file with the server entry: created, or the entry merged into it."""
    what = f"MCP server `{INIT_SERVER_NAME}` for {host.label}"
    rel = plan.target(host.config)
    if rel is None:
        return
    table = {host.key: {INIT_SERVER_NAME: entry}}
    if plan.kind(rel) is None:
        text = (json.dumps(table, indent=2, allow_nan=False) + "\n" if host.fmt == "json"
                else tomli_w.dumps(table))
        plan.write(rel, text, None, "create", what, shown=host.config)
        return
    old = plan.read(rel)
    if old is not None:
        (_merge_json if host.fmt == "json" else _merge_toml)(plan, host, entry, rel, old, what)


def _merge_json(plan: _Plan, host: Host, entry: dict[str, Any], rel: str, old: str,
                what: str) -> None:
    snippet = json.dumps({host.key: {INIT_SERVER_NAME: entry}})
    try:
        data = jsonc.loads(old, comments=host.comments) if old.strip() else {}
    except json.JSONDecodeError as exc:
        allowed = "JSON with comments" if host.comments else "JSON (comments included)"
        plan.refuse(host.config, f"line {exc.lineno}, column {exc.colno}: invalid JSON "
                    f"({exc.msg}); init does not rewrite a file it cannot read as {allowed}. "
                    f"Fix: repair it, or add this entry by hand: {snippet}")
        return
    if not isinstance(data, dict):
        plan.refuse(host.config, f"is a JSON {type(data).__name__}, expected an object with "
                    f"`{host.key}`. Fix: make it an object, or add the entry by hand")
        return
    servers = data.get(host.key, {})
    if not isinstance(servers, dict):
        plan.refuse(host.config, f"`{host.key}` is a {type(servers).__name__}, expected an "
                    "object of servers. Fix: make it an object")
        return
    have = servers.get(INIT_SERVER_NAME)
    if have == entry:
        plan.actions.append(InitAction(path=host.config, action="unchanged", what=what))
        return
    if have is not None:
        plan.refuse(host.config, f"already has a server `{INIT_SERVER_NAME}` that differs "
                    f"({json.dumps(have)}); init will not replace it. Fix: delete that entry "
                    f"and re-run, or keep yours")
        return
    try:
        text = jsonc.add_member(old, (host.key,), INIT_SERVER_NAME, entry,
                                comments=host.comments)
    except (ValueError, IndexError) as exc:
        plan.refuse(host.config, f"the entry cannot be added to its text ({exc}). Fix: add "
                    f"this entry by hand: {snippet}")
        return
    others = len(servers)
    kept = f" (kept {others} other server{'s' if others != 1 else ''})" if others else ""
    plan.write(rel, text, old, "update", what + kept, shown=host.config)


def _merge_toml(plan: _Plan, host: Host, entry: dict[str, Any], rel: str, old: str,
                what: str) -> None:
    table = tomli_w.dumps({host.key: {INIT_SERVER_NAME: entry}})
    try:
        data = tomllib.loads(old)  # a key written twice is an error here already
    except tomllib.TOMLDecodeError as exc:
        plan.refuse(host.config, f"invalid TOML ({exc}); init does not rewrite a file it cannot "
                    f"parse. Fix: repair it, or add by hand: {table!r}")
        return
    servers = data.get(host.key, {})
    have = servers.get(INIT_SERVER_NAME) if isinstance(servers, dict) else None
    if have == entry:
        plan.actions.append(InitAction(path=host.config, action="unchanged", what=what))
        return
    if have is not None:
        plan.refuse(host.config, f"already has [{host.key}.{INIT_SERVER_NAME}] and it differs "
                    f"({have!r}); init will not replace it. Fix: delete that table and re-run, "
                    "or keep yours")
        return
    # appended, not re-serialised: the user's comments, layout and line endings stay
    nl = jsonc.newline_of(old)
    text = old if old.endswith("\n") or not old else old + nl
    text += (nl if text.strip() else "") + table.replace("\n", nl)
    try:
        merged = tomllib.loads(text)[host.key][INIT_SERVER_NAME]
    except (tomllib.TOMLDecodeError, KeyError, TypeError):
        merged = None
    if merged != entry:
        plan.refuse(host.config, f"`{host.key}` is written in a form a new table cannot extend "
                    f"(an inline table?). Fix: add by hand: {table!r}")
        return
    plan.write(rel, text, old, "update", what, shown=host.config)


def _plan_skill(plan: _Plan, name: str, files: list[tuple[str, bytes]], source: Path,
                dest: str, link: bool) -> None:
    shown = f"{dest}/{name}/"
    folder = plan.target(dest)
    if folder is None:
        return
    here = f"{folder}/{name}"
    kind = plan.kind(here)
    if kind == "link":
        if (plan.root / here).resolve() == source.resolve():
            plan.actions.append(InitAction(path=shown, action="unchanged",
                                           what=f"skill {name} (linked)"))
        else:
            plan.refuse(shown.rstrip("/"), f"is a symlink to {os.readlink(plan.root / here)}, "
                        f"not to {source}. Fix: remove the link to install this skill, or keep "
                        "yours")
        return
    if link:
        if kind is not None:
            plan.refuse(shown.rstrip("/"), f"exists (a copy, or your own skill); "
                        f"{arg('link', True)} will not replace it. Fix: remove it to link the "
                        f"pack's folder, or run init without {arg('link', True)}")
            return
        plan.actions.append(InitAction(path=shown, action="link", what=f"skill {name} -> {source}"))
        plan.links.append((here, source))
        return
    new, same = [], 0
    for rel, data in files:
        target = f"{here}/{rel}"
        what = plan.kind(target)
        if what is None:
            new.append(StagedFile(target, data, None))
            continue
        if what != "file":
            plan.refuse(f"{shown}{rel}", "is not a plain file. Fix: remove it, or keep yours")
            return
        have = plan.read_bytes(target)
        if have is None:
            return
        if have != data:
            plan.refuse(f"{shown}{rel}", f"differs from the pack's {name}/{rel} (edited, or an "
                        "older version); init will not replace it. Fix: delete it to take the "
                        "pack's version, or keep yours")
            return
        same += 1
    n = len(files)
    what_ = f"skill {name} ({n} file{'s' if n != 1 else ''})"
    if not new:
        plan.actions.append(InitAction(path=shown, action="unchanged", what=what_))
        return
    plan.actions.append(InitAction(path=shown, action="update" if same else "create", what=what_))
    plan.writes.extend(new)


def agents_section(skill_dirs: list[str], names: list[str]) -> str:
    """The marked AGENTS.md section: where the skills are and how to start."""
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
    what = "whileai section (between its markers)"
    rel = plan.target("AGENTS.md")
    if rel is None:
        return
    if plan.kind(rel) is None:
        plan.write(rel, section, None, "create", what, shown="AGENTS.md")
        return
    old = plan.read(rel)
    if old is None:
        return
    nl = jsonc.newline_of(old)
    section = section.replace("\n", nl)
    lines = old.split("\n")
    begins = [i for i, ln in enumerate(lines) if ln.strip() == AGENTS_SECTION_BEGIN]
    ends = [i for i, ln in enumerate(lines) if ln.strip() == AGENTS_SECTION_END]
    if not begins and not ends:
        sep = "" if not old.strip() else (nl if old.endswith("\n") else nl + nl)
        text = old + sep + section if old.strip() else section
        plan.write(rel, text, old, "update", what, shown="AGENTS.md")
        return
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        marks = ", ".join(f"line {i + 1}" for i in sorted(begins + ends))
        plan.refuse("AGENTS.md", f"its whileai markers are out of order or repeated ({marks}); "
                    f"init replaces exactly one section from {AGENTS_SECTION_BEGIN} to "
                    f"{AGENTS_SECTION_END}. Fix: keep one pair, begin before end")
        return
    b, e = begins[0], ends[0]
    text = "\n".join(lines[:b]) + ("\n" if b else "") + section + "\n".join(lines[e + 1:])
    if text == old:
        plan.actions.append(InitAction(path="AGENTS.md", action="unchanged", what=what))
        return
    plan.write(rel, text, old, "update", what, shown="AGENTS.md")


def _plan_claude_import(plan: _Plan) -> None:
    """An ``@AGENTS.md`` line in the project's CLAUDE.md, where one exists: Claude Code reads
    CLAUDE.md, not AGENTS.md, and imports a file named on a line of its own [3]."""
    for name, line in (("CLAUDE.md", "@AGENTS.md"), (".claude/CLAUDE.md", "@../AGENTS.md")):
        if not os.path.lexists(plan.root / name):
            continue
        rel = plan.target(name)
        if rel is None:
            return
        old = plan.read(rel)
        if old is None:
            return
        what = "imports AGENTS.md (Claude Code reads CLAUDE.md, not AGENTS.md)"
        if any(ln.strip() == line for ln in old.splitlines()):
            plan.actions.append(InitAction(path=name, action="unchanged", what=what))
            return
        nl = jsonc.newline_of(old)
        sep = "" if not old.strip() else (nl if old.endswith("\n") else nl + nl)
        plan.write(rel, old + sep + line + nl, old, "update", what, shown=name)
        return


def _check_folders(plan: _Plan, rel: str) -> None:
    """Refuse, while planning, a path whose folder is in fact a file, a FIFO or a device: found
    only when writing, it left the files written before it (a half-done init)."""
    parts = Path(rel).parts[:-1]
    for i in range(len(parts)):
        upto = "/".join(parts[:i + 1])
        kind = plan.kind(upto)
        if kind is None:
            return
        if kind == "dir":
            plan.folders.add(upto)
            continue
        what = {"file": "a file", "link": "a symlink"}.get(
            kind, "not a folder (a FIFO, socket or device)")
        plan.refuse(upto, f"is {what}, where init needs a folder. Fix: remove or rename it, or "
                    f"leave this host out ({arg('hosts', op='init_project')})")
        return


# --- the command ---------------------------------------------------------------------------

def _skills(source: SkillsSource) -> list[tuple[str, list[tuple[str, bytes]]]]:
    names = source.names()
    if not names:
        raise ArgumentError(f"no skills found in {source.folder} (no */SKILL.md)", fix="pass "
                            f"{arg('skills_dir', op='init_project')} or set {SKILLS_ENV} to the "
                            "pack's skills folder")
    bad = [n for n in names if not _SKILL_NAME.fullmatch(n) or len(n) > _SKILL_NAME_MAX]
    if bad:
        shown = ", ".join(repr(n[:80]) for n in bad[:3])
        raise ArgumentError(f"{source.folder}: the skill folder{'s' if len(bad) > 1 else ''} "
                            f"{shown} {'are' if len(bad) > 1 else 'is'} not a skill name "
                            "(lowercase letters, digits and single hyphens, at most "
                            f"{_SKILL_NAME_MAX} characters: the Agent Skills format); init lists "
                            "skill names in AGENTS.md, so no other text is taken", fix="rename "
                            "the folder")
    root = source.root()
    out = []
    for name in names:
        folder = root.locate(name, argument="skill")
        out.append((name, skill_files(folder, skip=SKIP_NAMES, error=ArgumentError)))
    return out


@operation(
    cli="init", toolset="core", effect=WRITES_NEW,
    title="Wire a project to the pack: MCP server entry per host, skills, AGENTS.md",
    description=(
        "Write the MCP server entry for the agent hosts found in the folder (or named with "
        "hosts; with none found, the portable .mcp.json), copy the skills where those hosts "
        "read them, add a marked section to AGENTS.md and an @AGENTS.md line to an existing "
        "CLAUDE.md. What it writes can be committed (no path of this machine). Merges into "
        "existing files, never overwrites what is there; refuses (writing nothing) when a file "
        "cannot be merged. Re-running changes nothing."),
    doing="wiring a project", surfaces=frozenset({"cli"}))
def init_project(
        root: Annotated[str, Field(min_length=1, max_length=4096, description=(
            "The project's root folder.")), Arg(positional=True, metavar="DIR")] = ".", *,
        hosts: Annotated[list[HostChoice] | None, Field(max_length=5, description=(
            "The hosts to set up: " + ", ".join(f"{h.name} ({h.config})" for h in HOSTS.values())
            + ", or all; null: every host whose files are in the folder, else the portable "
            ".mcp.json."))] = None,
        dry_run: Annotated[bool, Field(description=(
            "Say what would be written; write nothing."))] = False,
        link: Annotated[bool, Field(description=(
            "Symlink the skill folders to the pack's instead of copying them."))] = False,
        command: Annotated[str | None, Field(max_length=4096, description=(
            "The server program in the entries (null: the whileai-mcp of a venv inside the "
            "folder, by its path from there, else whileai-mcp on the PATH).")),
            Arg(metavar="PATH")] = None,
        skills_dir: Annotated[str | None, Field(max_length=4096, description=(
            "The skills to install (null: $WHILEAI_SKILLS_DIR, else the pack's skills/ "
            "folder).")), Arg(metavar="DIR")] = None) -> InitResult:
    """Write the MCP server entry, the skills and the AGENTS.md section for a project's hosts
    (module docstring); raises :class:`ConfigError`, writing nothing, naming each file that
    cannot be merged."""
    base = Path(root).expanduser()
    if not base.is_dir():
        raise ArgumentError(f"{str(root)!r} is not a folder", fix="pass the project's root folder "
                            "(default: the current directory)")
    base = base.resolve()
    chosen = _hosts(base, hosts)
    source = SkillsSource(skills_dir)
    skills = _skills(source)
    if link and (source.is_package and running_from_a_cache() or in_a_cache(source.folder)):
        raise ArgumentError(f"{arg('link', True)} would point into {source.folder}, in a cache "
                            "that uv may delete (uvx)",
                            fix=f"run init without {arg('link', True)} "
                            "(the skills are copied), "
                            "or install the pack first (uv tool install / pipx install)")
    cmd, notes = server_command(base, command)
    plan = _Plan(root=base, door=Root(base, confined=True, error=ConfigError,
                                      label="the project folder"))
    entries = {}
    for name in chosen:
        host = HOSTS[name]
        entries[name] = _entry(host, cmd)
        _plan_host(plan, host, entries[name])
    skill_dirs = list(dict.fromkeys(HOSTS[h].skills for h in chosen))
    for folder in skill_dirs:
        for name, files in skills:
            _plan_skill(plan, name, files, source.folder / name, folder, link)
    _plan_agents_md(plan, agents_section(skill_dirs, [n for n, _ in skills]))
    if "claude" in chosen:
        _plan_claude_import(plan)
    for rel in [w.rel for w in plan.writes] + [d for d, _ in plan.links]:
        _check_folders(plan, rel)
    planned: dict[str, bytes] = {}
    for w in plan.writes:  # two folders may be one (a link): one write each
        if planned.setdefault(w.rel, w.data) != w.data:
            plan.refuse(w.rel, "is reached twice through links with different content. Fix: "
                        f"choose one host ({arg('hosts', op='init_project')})")
    plan.writes = list({w.rel: w for w in plan.writes}.values())
    if plan.problems:
        raise ConfigError(f"init changed nothing in {base}: " + "; ".join(plan.problems))
    if "codex" in chosen:
        notes.append("Codex reads .codex/config.toml only in a trusted project; otherwise put the "
                     "same [mcp_servers.whileai] table in ~/.codex/config.toml")
    if hosts is None and chosen.get(FALLBACK_HOST, "").startswith("no host"):
        notes.append("no agent host's files were found, so init wrote the portable .mcp.json "
                     "(Claude Code; VS Code reads it too). For another host: "
                     + call("init_project", hosts=["cursor"]) + " (or vscode, codex, all)")
    if not dry_run:
        put_in_place(plan.door, plan.writes, links=plan.links, existing=plan.folders,
                     what=f"init changed nothing in {plan.root}")
    plain = HOSTS["claude"]
    return InitResult(root=str(base), hosts=list(chosen), found=chosen, dry_run=dry_run,
                      actions=plan.actions, server=_entry(plain, cmd), entries=entries,
                      notes=notes)
