"""Catalog family: terminal multiplexers and recorders (tmux, tmate, screen, script).

They run shell commands: tmux's ``-c CMD``, the command of ``new-session``,
``new-window``, ``split-window``, ``respawn-pane``, ``display-popup`` (run by
the default shell), ``run-shell CMD``, ``if-shell CMD``, ``pipe-pane CMD``;
screen's command operand; ``script -c CMD``. Each is parsed as commands, every
one its own segment. A session started without a command runs an interactive
shell (``screen``, ``script -q /dev/null``, ``tmux new -d``): the program
``sh``, a segment of its own that reads its commands from a terminal.

Some commands put keys or configuration into a session, where they run as
typed: ``send-keys``, ``paste-buffer``, ``source-file``, ``bind-key``,
``set-hook``, ``set-environment``, a ``default-command``/``default-shell``
option, tmux ``-f FILE``, ``-S SOCKET`` (another server's sessions), screen's
``-X`` and ``-c``, a ``#(CMD)`` in a tmux format. Each is a finding. screen's
``-L``/``-Logfile FILE`` and script's operand write their file.
"""

from __future__ import annotations

from shellgate.shell.argv.engine import GNU, GNU_PREFIX, POSIX, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, Runs, flag, optional, val, values
from shellgate.shell.catalog.read import add_program

_TYPES = "types keys or commands into a session (they run as if typed)"
_SHELL = ("sh",)  # the user's interactive shell, as rules spell it

#: tmux commands (and aliases) → (letters taking a value, how its operands run):
#: "rest" a shell command of all operands, "first" of the first one, "keys" a finding.
_TMUX: dict[str, tuple[str, str]] = {
    "new-session": ("cefnstxyF", "rest"), "new": ("cefnstxyF", "rest"),
    "new-window": ("cenFt", "rest"), "neww": ("cenFt", "rest"),
    "split-window": ("celpFt", "rest"), "splitw": ("celpFt", "rest"),
    "respawn-pane": ("cet", "rest"), "respawnp": ("cet", "rest"),
    "respawn-window": ("cet", "rest"), "respawnw": ("cet", "rest"),
    "display-popup": ("bcdehsStTwxy", "rest"), "popup": ("bcdehsStTwxy", "rest"),
    "run-shell": ("cdt", "first"), "run": ("cdt", "first"),
    "if-shell": ("t", "first"), "if": ("t", "first"),
    "pipe-pane": ("t", "first"), "pipep": ("t", "first"),
    **dict.fromkeys(("send-keys", "send", "paste-buffer", "pasteb", "source-file", "source",
                     "bind-key", "bind", "set-hook", "set-environment", "setenv",
                     "command-prompt", "confirm-before", "confirm"), ("", "keys")),
}  # fmt: skip
#: Options whose value is a command tmux runs later.
_TMUX_COMMAND_OPTIONS = frozenset({"default-command", "default-shell", "lock-command"})


def _tmux_commands(words: Argv) -> list[Argv]:
    """The commands of a tmux command line, separated by ``;`` (``\\;`` in the shell)."""
    commands: list[list[str]] = [[]]
    for word in words:
        if word.endswith(";"):
            if word[:-1]:
                commands[-1].append(word[:-1])
            commands.append([])
        else:
            commands[-1].append(word)
    return [tuple(c) for c in commands if c]


def _tmux_command(name: str, command: Argv, out: Reading) -> None:
    verb = command[0]
    values_, kind = _TMUX.get(verb, ("", ""))
    if any("#(" in word for word in command):
        out.finding(f"'{name} {verb}' expands a format that runs a shell command (#(…))")
    if verb in ("set-option", "set", "set-window-option", "setw"):
        if any(word.lstrip("-@") in _TMUX_COMMAND_OPTIONS for word in command[1:]):
            out.finding(f"'{name} {verb}' sets a command tmux runs later")
        return
    if kind == "keys":
        out.finding(f"'{name} {verb}' {_TYPES}")
        return
    i, operands = 1, list[str]()
    while i < len(command):
        word = command[i]
        if word == "--":
            operands.extend(command[i + 1 :])
            break
        if len(word) > 1 and word.startswith("-") and not operands:
            takes = next((c for c in word[1:] if c in values_), "")
            i += 2 if takes and word.endswith(takes) else 1
            continue
        operands.append(word)
        i += 1
    label = f"{name} {verb} command"
    if kind == "rest":
        if operands:
            out.payloads.append((label, " ".join(operands)))
        elif verb in ("new-session", "new", "new-window", "neww", "split-window", "splitw"):
            add_program(out, f"{name} shell", _SHELL)
    elif kind == "first" and operands:
        out.payloads.append((label, operands[0]))
        if verb in ("if-shell", "if") and len(operands) > 1:
            out.finding(f"'{name} {verb}' runs tmux commands of its choosing")


def _tmux(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """The command line after tmux's own options: with none, ``new-session``."""
    for value in parsed.values("-c"):
        out.payloads.append((f"{argv[0]} -c command", value))
    if parsed.has("-c"):
        return
    commands = _tmux_commands(argv[parsed.end :]) or [("new-session",)]
    for command in commands:
        _tmux_command(argv[0], command, out)


_TMUX_ENTRY = Entry(
    ("tmux", "tmate"),
    POSIX,
    (
        val("-c"),
        val("-f", finding="reads a configuration file (its commands run)"),
        val("-S", finding="connects to a server by socket path (another user's sessions)"),
        val("-L"), val("-T"),
        *(flag(f"-{c}") for c in "2CDhlNuVv"),
    ),
    hooks=(_tmux,),
    no_canonical=True,
)


#: screen's options: the letters taking a value (glued or the next word) and its words.
_SCREEN_VALUES = frozenset("cehpsStT")
_SCREEN_WORDS = frozenset({"-ls", "-list", "-wipe", "-Logfile", "-dmS"})
#: Options after which no new program starts (attach, list, send a command).
_SCREEN_ATTACH = frozenset("rRxXQv")


def _screen_scan(argv: Argv) -> tuple[dict[str, list[str]], int]:
    """screen's own option grammar: ``{letter or word: values}`` and where CMD starts."""
    seen: dict[str, list[str]] = {}
    i = 1
    while i < len(argv):
        word = argv[i]
        if not word.startswith("-") or word == "-":
            break
        i += 1
        if word in _SCREEN_WORDS:
            takes = word in ("-Logfile", "-dmS")
            seen.setdefault(word, []).append(argv[i] if takes and i < len(argv) else "")
            i += 1 if takes else 0
            continue
        for j, letter in enumerate(word[1:], start=1):
            if letter in _SCREEN_VALUES:
                value = word[j + 1 :] or (argv[i] if i < len(argv) else "")
                i += 0 if word[j + 1 :] else 1
                seen.setdefault(letter, []).append(value)
                break
            seen.setdefault(letter, []).append("")
    return seen, i


def _screen(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``screen [options] [CMD …]``: CMD is a program; with none, the user's shell.
    ``-Logfile FILE`` writes FILE, and so does ``-L FILE CMD`` (screen 4.06+ takes
    the word after ``-L`` as the log when a command follows it)."""
    del parsed
    seen, end = _screen_scan(argv)
    inner = argv[end:]
    out.writes.extend(v for v in seen.get("-Logfile", []) if v)
    if "c" in seen:
        out.finding(f"'{argv[0]} -c' reads a configuration file (its commands run)")
    if "X" in seen:
        out.finding(f"'{argv[0]} -X' {_TYPES}")
    for shell in seen.get("s", []):
        add_program(out, f"{argv[0]} -s program", (shell,))
    if _SCREEN_ATTACH & seen.keys() or {"-ls", "-list", "-wipe"} & seen.keys():
        return  # attaches, lists or sends a command: no new program
    if "L" in seen and len(inner) > 1:
        out.writes.append(inner[0])
        out.guesses.append(inner[1:])
    if inner:
        add_program(out, f"{argv[0]} payload", inner)
    else:
        add_program(out, f"{argv[0]} shell", _SHELL)


_SCREEN = Entry(("screen",), POSIX, hooks=(_screen,), no_canonical=True)


ENTRIES: tuple[Entry, ...] = (
    _TMUX_ENTRY,
    _SCREEN,
    Entry(
        ("minicom",),
        GNU,
        values("-D --device -b --baudrate -S --script -C --capturefile -a --attrib"),
        finding="opens a serial terminal whose menu runs programs (Ctrl-A S, K)",
    ),
    Entry(
        ("rlwrap",),
        GNU_PREFIX,
        (
            val("-l --logfile", writes=True),
            val("-H --history-filename", writes=True),
            val("-z --filter", runs="words"),
            *values("-b -f -n -O -p -P -q -s -S -t -w -e -g -C -D -M -o"),
            optional("-a --always-readline"),
        ),
        runs=Runs(),
    ),
)
