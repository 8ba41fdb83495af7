"""Catalog family: compilers and their drivers (gcc, clang, rustc, ghc) and TeX.

An admin who allows ``gcc *`` allows compiling; a compiler driver runs other
programs on the way (the preprocessor, ``cc1``, ``as``, ``ld``), and some
options choose them: ``-wrapper PROG,ARGS`` runs every one of them through
PROG (a program of its own), ``-B DIR`` takes them from DIR, ``-specs=FILE``
rewrites the command lines it builds, ``-fplugin=``/``-Xlinker -plugin``/
``-C codegen-backend=`` load code into the compiler, ``@FILE`` reads more
options from a file, ``--ld-path``/``-fuse-ld=PATH`` and rustc's ``-C linker=``
name the linker (a program of its own). Each of those is a finding or a
program. ``-o FILE`` and ``-MF FILE`` are written (build products).

``ghc -e EXPR`` runs Haskell (its own code: read by :mod:`.inline_code`);
``-pgmX PROG`` names the program ghc runs for phase X.

TeX engines run shell commands with ``\\write18`` when ``--shell-escape`` is on
(a finding), and a TeX program given on the command line (``latex
'\\documentclass…'``) is read as TeX code: ``\\write18`` starts programs,
``\\openout`` writes files.
"""

from __future__ import annotations

import re

from shellgate.shell.argv.engine import GNU, Dialect, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, val, values
from shellgate.shell.catalog.inline_code import read_code
from shellgate.shell.catalog.read import add_program, split_words

#: gcc's own parser: one-dash long options, values glued or in the next word.
GCC = Dialect("gcc", bundles=False, abbreviations=False, single_dash_long=True)
_DIRECTORY = "runs its compiler programs (cc1, as, ld) from a directory of its choosing"
_PLUGIN = "loads a plugin (code) into the compiler or linker"
_SPECS = "reads a specs file (it rewrites the command lines the driver runs)"
_RESPONSE = "reads more options from a file"
#: Options of the gcc/clang drivers whose value is the next word when not glued.
_GCC_VALUES = frozenset({"-o", "-MF", "-MT", "-MQ", "-x", "-I", "-L", "-D", "-U", "-include",
                         "-imacros", "-isystem", "-iquote", "-idirafter", "-iprefix",
                         "-Xlinker", "-Xassembler", "-Xpreprocessor", "-Xclang", "-B",
                         "-wrapper", "-specs", "-target", "-arch", "-aux-info", "-e",
                         "-T", "-u", "-z", "-l"})  # fmt: skip
_LINKER_PLUGIN = re.compile(r"--?plugin(?:=|$)")


def _linker_words(word: str) -> list[str]:
    """The linker's words a ``-Wl,a,b`` option hands on."""
    return word.split(",")[1:] if word.startswith("-Wl,") else []


def _gcc(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Read a gcc/clang command line (the driver's own grammar, word by word)."""
    del parsed
    name = argv[0]
    i = 1
    while i < len(argv):
        word = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else ""
        takes_next = word in _GCC_VALUES
        if word.startswith("@") and len(word) > 1:
            out.finding(f"'{name} {word[:30]}' {_RESPONSE}")
        elif word == "-wrapper" or word.startswith("-wrapper="):
            wrapper = word.partition("=")[2] if "=" in word else value
            add_program(out, f"{name} -wrapper program", tuple(wrapper.split(",")))
        elif word.startswith("-B"):
            out.finding(f"'{name} -B' {_DIRECTORY}")
        elif word.startswith(("-fplugin=", "-fpass-plugin=", "-fplugin-arg")) or word in (
            "-fplugin", "-load"
        ):
            out.finding(f"'{name} {word.partition('=')[0]}' {_PLUGIN}")
        elif word.startswith(("-specs", "--specs")):
            out.finding(f"'{name} -specs' {_SPECS}")
        elif word.startswith(("--ld-path=", "-fuse-ld=")):
            linker = word.partition("=")[2]
            if "/" in linker or word.startswith("--ld-path="):
                add_program(out, f"{name} linker program", (linker,))
        elif any(_LINKER_PLUGIN.match(w) for w in _linker_words(word)) or (
            word == "-Xlinker" and _LINKER_PLUGIN.match(value)
        ):
            out.finding(f"'{name} {word[:30]}' {_PLUGIN}")
        elif word in ("-o", "-MF"):
            if value:
                out.outputs.append(value)
        elif word.startswith(("-o", "-MF")):
            out.outputs.append(word[2:] if word.startswith("-o") else word[3:])
        i += 2 if takes_next else 1


_GCC_NAMES = ("gcc", "g++", "cc", "c++", "c89", "c99", "clang", "clang++", "clang-cpp",
              "cpp", "gfortran", "gccgo", "tcc", "icc", "icx", "emcc", "zig-cc")  # fmt: skip
_CROSS = r"(?:[\w.]+-)?(?:gcc|g\+\+|cc|c\+\+|cpp)(?:-\d+(?:\.\d+)*)?|clang(?:\+\+)?(?:-\d+)?"


def _rustc(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-C KEY=VALUE`` codegen settings: ``linker=`` names a program, the
    ``codegen-backend``/``llvm-plugins``/``link-arg(s)`` ones load or hand on code."""
    for setting in parsed.values("-C"):
        key, _, value = setting.partition("=")
        if key == "linker" and value:
            add_program(out, f"{argv[0]} -C linker program", (value,))
        elif key in ("codegen-backend", "llvm-plugins", "link-arg", "link-args",
                     "linker-flavor", "link-self-contained", "passes", "llvm-args"):
            out.finding(f"'{argv[0]} -C {key}' loads or hands code to the compiler or linker")


_RUSTC = Entry(
    ("rustc", "rustdoc"),
    GNU,
    (
        val("-C --codegen"),
        val("-Z", finding="turns on unstable compiler options (plugins, its own linker)"),
        val("-o", writes=True),
        val("--out-dir", writes=True),
        val("--emit"), val("-L"), val("-l"), val("--extern"), val("--crate-type"),
        val("--crate-name"), val("--edition"), val("--target"), val("--cfg"), val("--cap-lints"),
        val("-A --allow"), val("-W --warn"), val("-D --deny"), val("-F --forbid"),
        val("--error-format"), val("--json"), val("--sysroot"), val("--print"), val("--explain"),
        flag("-g"), flag("-O"), flag("--test"), flag("-v --verbose", inert=True),
    ),
    hooks=(_rustc,),
    reports=True,
)


def _ghc(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-e EXPR`` is Haskell ghc runs itself; ``-pgmX PROG`` names a phase's program."""
    del parsed
    for i, word in enumerate(argv[1:], start=1):
        if word == "-e" and i + 1 < len(argv):
            code = read_code("haskell", argv[i + 1], f"'{argv[0]} -e'")
            for text in code.findings:
                out.finding(text)
            out.mentions.extend(code.mentions)
        elif word.startswith("-pgm") and len(word) > 4:
            letters = re.match(r"-pgm(?:[a-zA-Z]+)", word)
            rest = word[letters.end() :] if letters else ""
            program = rest or (argv[i + 1] if i + 1 < len(argv) else "")
            if program:
                add_program(out, f"{argv[0]} {word[:8]} program", split_words(program))
        elif word.startswith(("-fplugin", "-plugin-package")):
            out.finding(f"'{argv[0]} {word[:20]}' {_PLUGIN}")
        elif word == "-ghci-script":
            out.finding(f"'{argv[0]} {word}' runs a GHCi script file")
        elif word == "--interactive" and "-e" not in argv:
            out.stdin_code = "haskell"


def _ghci(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """ghci without ``-e`` reads Haskell from stdin (a known heredoc is read)."""
    del parsed
    if "-e" not in argv:
        out.stdin_code = "haskell"


_TEX_SHELL = "runs shell commands from TeX (\\write18)"


def _tex(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """Shell escape in any spelling; TeX code given on the command line is read."""
    del parsed
    for word in argv[1:]:
        bare = word.lstrip("-")
        if bare.startswith(("shell-escape", "enable-write18")) and "=" not in bare:
            out.finding(f"'{argv[0]} {word}' {_TEX_SHELL}")
        elif word.startswith(("\\", "&")) or ("\\" in word and not word.startswith("-")):
            code = read_code("tex", word, f"'{argv[0]}'")
            for text in code.findings:
                out.finding(text)


_TEX_NAMES = ("tex", "etex", "pdftex", "xetex", "luatex", "latex", "pdflatex", "xelatex",
              "lualatex", "luahbtex", "platex", "uplatex", "context", "amstex", "initex",
              "virtex", "mptopdf")  # fmt: skip


def _latexmk(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-pdflatex=CMD`` (and the other engine settings) are commands latexmk runs
    through the shell; ``-e CODE`` is Perl it runs."""
    del parsed
    for i, word in enumerate(argv[1:], start=1):
        key, eq, value = word.lstrip("-").partition("=")
        if eq and key in ("pdflatex", "latex", "xelatex", "lualatex", "dvipdf", "dvips",
                          "ps2pdf", "makeindex", "bibtex", "biber", "pdf_previewer",
                          "print_type", "view"):
            out.payloads.append((f"{argv[0]} -{key} command", value))
        elif word in ("-e", "-r") and i + 1 < len(argv):
            out.finding(f"'{argv[0]} {word}' runs Perl code or an rc file (it sets commands)")


ENTRIES: tuple[Entry, ...] = (
    Entry(_GCC_NAMES, GCC, hooks=(_gcc,), no_canonical=True, reports=True),
    _RUSTC,
    Entry(("ghc", "runghc", "runhaskell"), GCC, hooks=(_ghc,), no_canonical=True, reports=True),
    Entry(("ghci",), GCC, hooks=(_ghc, _ghci), no_canonical=True),
    Entry(_TEX_NAMES, GNU, values("-output-directory --output-directory -jobname -fmt"),
          hooks=(_tex,), no_canonical=True),
    Entry(("latexmk",), GNU, hooks=(_latexmk, _tex), no_canonical=True),
)
PATTERNS: tuple[tuple[str, Entry], ...] = ((_CROSS, ENTRIES[0]),)
