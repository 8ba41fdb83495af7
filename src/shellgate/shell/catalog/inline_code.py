"""Code an interpreter runs itself (``python -c``, ``python - <<EOF``, ``node -e``…).

Such code is the admin's trust when they allow the interpreter: ``python *``
allows ``python -c 'print(1)'`` (docs/policies.md). What the code visibly does
beyond computing is read here, per language, as the catalog reads a program's
options: it can start other programs (``os.system``, ``subprocess``,
``child_process``, backticks), use the network (sockets, HTTP clients), load
native code (``ctypes``, ``dlopen``), or pick what it imports or calls by a
name built at run time (``__import__(x)``, ``getattr(os, name)``), and each is
a finding: deny rules cannot see a program started from inside Python, so the
segment asks. The path literals in the code are *mentions*: the protected-paths
and protected-reads layers ask when one names a protected path or a secret
(``open("/root/.ssh/id_rsa")``).

This is a reading, not a proof: code can hide all of it from a pattern
(``getattr(__import__("o" + "s"), "sy" + "stem")`` is caught by its computed
import, not every disguise is). The admin who allows an interpreter allows its
code; these findings make the common spellings of escaping it ask.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PY_SPAWN = (
    r"\bos\s*\.\s*(?:system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork\w*)\b|\bsubprocess\b"
    r"|\bpty\s*\.\s*spawn|\bcommands\s*\.|\bpopen2\b|create_subprocess|\bmultiprocessing\b"
    r"|\bpexpect\b|\bsh\s*\.\s*Command|\bplumbum\b|\bwebbrowser\b|\bos\s*\.\s*startfile"
    r"|\.\s*(?:system|popen|exec[lv]p?e?|spawn[lv]p?e?|posix_spawnp?)\s*\("
    r"|\bfrom\s+(?:os|posix|nt|pty)\s+import\b[^\n;]*"
    r"(?:\b(?:system|popen|exec\w*|spawn\w*|posix_spawn\w*|fork\w*)\b|\*)"
)
_PY_NET = (
    r"\bsocket\b|\burllib\b|\bhttp\s*\.\s*client|\bhttp\.server|\brequests\b|\bhttpx\b"
    r"|\baiohttp\b|\bftplib\b|\btelnetlib\b|\bsmtplib\b|\bparamiko\b|\bxmlrpc\b|\bpoplib\b"
    r"|\bimaplib\b|\bsocketserver\b|\basyncio\s*\.\s*open_connection|\burlopen\b"
)
_PY_NATIVE = r"\bctypes\b|\bcffi\b|\b_ctypes\b|\bdlopen\b|\bimp\s*\.\s*load_dynamic"
_PY_DYNAMIC = (
    r"__import__\s*\(\s*[^'\"\s)]|importlib\s*\.\s*import_module\s*\(\s*[^'\"\s)]"
    r"|\bgetattr\s*\(\s*(?:os|sys|subprocess|builtins|__builtins__|posix|pty)\b"
    r"|\bexec\s*\(\s*(?:compile|bytes|base64|codecs|zlib|marshal|\w+\s*\.\s*decode)"
    r"|\beval\s*\(\s*(?:compile|bytes|base64|codecs|zlib)|\bmarshal\s*\.\s*loads|\bpickle\s*\.\s*loads"
    # code it builds or reads at run time: exec of anything, eval of input, a console
    # or debugger reading its stdin, a module run by name (python -m X is X)
    r"|\bexec\s*\(|\beval\s*\(\s*(?:input|sys\s*\.\s*stdin|open)\b|\bcode\s*\.\s*interact"
    r"|\bInteractive(?:Console|Interpreter)\b|\bpdb\b|\bbreakpoint\s*\(|\brunpy\b"
    r"|\bvars\s*\(\s*(?:os|posix|subprocess|pty|builtins)\b|\b(?:os|posix)\s*\.\s*__dict__"
    r"|__getattribute__\s*\("
)
_PERL_SPAWN = (
    r"\bsystem\b|\bexec\b|\bqx\b|`|\bfork\b|\bopen\s*\(?[^;]*(?:\|\s*['\"]|['\"]\s*\|"
    r"|['\"]-\|)|\bIPC::|\bpipe\s*\(|\bsyscall\b"
)
_PERL_NET = r"\bIO::Socket|\bSocket\b|\bLWP\b|\bHTTP::|\bNet::|\bsocket\s*\("
_PERL_NATIVE = r"\bDynaLoader\b|\bXSLoader\b|\bFFI::"
_PERL_DYNAMIC = r"\beval\s*\(?\s*\$|\brequire\s+\$"
_RUBY_SPAWN = (
    r"\bsystem\b|\bexec\b|\bspawn\b|%x|`|\bIO\s*\.\s*popen|\bOpen3\b|\bProcess\s*\.\s*spawn"
    r"|\bfork\b|\bPTY\b|\bKernel\s*\.\s*(?:open|system|exec)|\bopen\s*\(\s*['\"]\|"
)
_RUBY_NET = (
    r"\bSocket\b|\bTCPSocket\b|\bNet::|\bopen-uri\b|\bURI\s*\.\s*open|\bUDPSocket\b"
    r"|\bhttpd\b|\bWEBrick\b|require\s*\(?\s*['\"](?:socket|net/\w+|open-uri|webrick|un)['\"]"
)
_RUBY_NATIVE = r"\bFiddle\b|\bDL\b|\bFFI\b"
_RUBY_DYNAMIC = r"\beval\b|\bsend\s*\(|\bconst_get\b"
_JS_SPAWN = (
    r"child_process|\bexecSync\b|\bspawnSync\b|\bexecFile|process\s*\.\s*binding"
    r"|\bDeno\s*\.\s*(?:run|Command)|\bBun\s*\.\s*spawn|\bworker_threads\b"
)
_JS_NET = (
    r"require\s*\(\s*['\"](?:node:)?(?:net|http|https|dgram|tls|dns)['\"]|\bfetch\s*\("
    r"|\bWebSocket\b|\bXMLHttpRequest\b|from\s+['\"](?:node:)?(?:net|http|https|dgram)['\"]"
)
_JS_NATIVE = r"process\s*\.\s*dlopen|\bffi-napi\b|\bDeno\s*\.\s*dlopen|\bbun:ffi\b"
_JS_DYNAMIC = r"require\s*\(\s*[^'\"\s)]|import\s*\(\s*[^'\"\s)]|\bFunction\s*\(|\beval\s*\("
_PHP_SPAWN = (
    r"\b(?:system|exec|shell_exec|passthru|popen|proc_open|pcntl_exec|pcntl_fork|mail)\s*\("
    r"|`|\bnew\s+COM\b"
)
_PHP_NET = r"\bfsockopen\b|\bcurl_\w+|\bsocket_\w+|\bstream_socket_\w+|https?://|ftp://"
_PHP_NATIVE = r"\bdl\s*\(|\bFFI\b"
_PHP_DYNAMIC = r"\beval\s*\(|\bassert\s*\(|\$\w+\s*\("
_LUA_SPAWN = r"\bos\s*\.\s*execute|\bio\s*\.\s*popen|\bposix\b"
_LUA_NET = r"\bsocket\b|\bhttp\b"
_LUA_NATIVE = r"package\s*\.\s*loadlib|\bffi\b|require\s*\(?\s*[^'\"\s(]"
_R_SPAWN = r"\bsystem2?\s*\(|\bshell\s*\(|\bpipe\s*\(|\bprocessx\b|\bsys\s*::"
_R_NET = r"\burl\s*\(|\bdownload\.file|\bsocketConnection|\bhttr\b|\bcurl\b"
_R_NATIVE = r"\bdyn\.load|\bRcpp\b|\.Call\s*\(|\.C\s*\("
_TCL_SPAWN = r"\bexec\b|\bopen\s+\"?\||\bspawn\b|\bsystem\b"
_TCL_NET = r"\bsocket\b|\bhttp::"
_TCL_NATIVE = r"\bload\b"
_JULIA_SPAWN = r"\brun\s*\(|`|\bpipeline\s*\(|\bspawn\b|\bprocess_exited\b|\bBase\.Cmd\b"
_JULIA_NET = r"\bdownload\s*\(|\bSockets\b|\bconnect\s*\(|\blisten\s*\(|\bDownloads\b|\bHTTP\b"
_JULIA_NATIVE = r"\bccall\b|\bLibdl\b|\bdlopen\b|@ccall"
_HASKELL_SPAWN = (
    r"\bSystem\.Process\b|\bcallCommand\b|\bcallProcess\b|\breadProcess\w*|\bspawn\w+"
    r"|\brawSystem\b|\bsystem\b|\bexecuteFile\b|\bSystem\.Posix\b|\bcreateProcess\b"
)
_HASKELL_NET = r"\bNetwork\b|\bsocket\b|\bconnectTo\b"
_HASKELL_NATIVE = r"\bforeign\s+import\b|\bunsafePerformIO\b|\bSystem\.Posix\.DynamicLinker"
#: Lisps and Schemes (guile, clisp, sbcl, racket, chicken…): processes, sockets, FFI.
_LISP_SPAWN = (
    r"\bsystem\*?\b|\brun-(?:shell-command|program)\b|\bopen-(?:input-|output-)?pipe\b"
    r"|\bprimitive-fork\b|\bexecl?p?e?\b|\bprocess\*?\b|\bshell\b|\bsubprocess\b"
    r"|\bext:|\bsb-ext:|\buiop:|\bspawn\b"
)
_LISP_NET = r"\bsocket\b|\bconnect\b|\btcp-|\bhttp-|\burl\b|\bsb-bsd-sockets\b"
_LISP_NATIVE = r"\bload-extension\b|\bdynamic-link\b|\bload-foreign\b|\bffi\b|\bcffi\b"
_LISP_DYNAMIC = r"\beval\b|\bload\b|\bprimitive-load\b|\bread-from-string\b|\bcompile\b"
#: gnuplot: system(), backquotes, ``!cmd``, piped ``load``/``plot`` and ``set output``.
_GNUPLOT_SPAWN = r"\bsystem\s*[(\"']|`|(?m:^\s*!)|(?:^|;)\s*!|['\"]\s*<|\bshell\b|['\"]\s*\|"
_GNUPLOT_WRITES = r"\bset\s+(?:output|print|table|logfile)\b|\bsave\b"
#: m4 and dc: macros and commands that run the shell.
_M4_SPAWN = r"\b(?:e?syscmd|esyscmd)\b|\bmaketemp\b|\bmkstemp\b"
_DC_SPAWN = r"!"
#: S-Lang (slsh), Octave/MATLAB, Erlang, Elixir, Groovy, Rhino/Nashorn (jrunscript, jjs).
_SLANG_SPAWN = r"\bsystem\s*\(|\bpopen\s*\(|\bexecv\w*\b|\bfork\b"
_OCTAVE_SPAWN = r"\bsystem\s*\(|\bunix\s*\(|\bdos\s*\(|\bshell_cmd\b|\bpopen2?\s*\(|!|\bexec\s*\("
_OCTAVE_NET = r"\burlread\b|\burlwrite\b|\bwebread\b|\bwebsave\b|\bweboptions\b"
_ERLANG_SPAWN = r"\bos\s*:\s*cmd\b|\bopen_port\b|\bSystem\.cmd\b|\bPort\.open\b|:os\.cmd"
_ERLANG_NET = r"\bgen_tcp\b|\bgen_udp\b|\bhttpc\b|\bssl:|:gen_tcp|:httpc"
_JVM_SPAWN = (
    r"\bexec\s*\(|\bRuntime\b|\bProcessBuilder\b|\.execute\s*\(|\bjava\.lang\.Process"
    r"|\bProcess\.Start\b|\bSystem\.Diagnostics\b"
)
_JVM_NET = r"\bjava\.net\b|\bURL\s*\(|\bSocket\b|\bcp\s*\(\s*['\"]\w+://|\bHttp\w*Client"
_JVM_NATIVE = r"\bSystem\s*\.\s*load|\bJNI\b|\bLibrary\b"
#: TeX: \write18 (shell escape), piped \input, \openout writes, Lua in LuaTeX.
_TEX_SPAWN = r"\\write18|\\input\s*\||\\directlua|\\luaexec|\\ShellEscape|\\immediate\\write18"
_TEX_WRITES = r"\\openout|\\newwrite"
#: bpftrace: system() (with --unsafe) runs commands.
_BPF_SPAWN = r"\bsystem\s*\("
# SQL shells (sqlite3, psql, mysql, duckdb): their dot- and backslash-commands and a
# few functions run programs, write files or load extensions.
_SQL_SPAWN = (
    r"(?m:^\s*\.(?:shell|system)\b)|\\!|\bPROGRAM\b|(?im:^\s*system\s)|\bsys_exec\b"
    r"|(?i:\bpager\b)|(?m:^\s*\\(?:setenv|gexec))"
)
_SQL_NATIVE = r"(?i:\bload_extension\b)|(?m:^\s*\.load\b)|(?i:\b(?:INSTALL|LOAD)\s+\w)"
_SQL_WRITES = (
    r"(?m:^\s*\.(?:output|once|save|backup|excel|clone|import|log|open|read|restore)\b)"
    r"|(?i:\bwritefile\s*\()|\\(?:i|ir|include)\b|(?m:^\s*source\s)"
    r"|(?i:\bATTACH\b)|(?i:\bVACUUM\s+INTO)|(?i:\bINTO\s+(?:OUT|DUMP)FILE)"
    r"|\\(?:o|w|out)\b|(?i:\blo_export)|(?i:\bCOPY\b[^;]*\bTO\b)|(?i:\btee\s)"
)


@dataclass(frozen=True)
class Language:
    """What, in one language's code, starts programs, uses the network, loads native
    code or names what runs at run time."""

    name: str
    spawn: re.Pattern[str]
    network: re.Pattern[str]
    native: re.Pattern[str]
    dynamic: re.Pattern[str] | None = None
    writes: re.Pattern[str] | None = None  # files it writes where it says (SQL shells)


def _language(
    name: str, spawn: str, network: str, native: str, dynamic: str = "", writes: str = ""
) -> Language:
    return Language(
        name, re.compile(spawn), re.compile(network), re.compile(native),
        re.compile(dynamic) if dynamic else None, re.compile(writes) if writes else None,
    )  # fmt: skip


LANGUAGES: dict[str, Language] = {
    language.name: language
    for language in (
        _language("python", _PY_SPAWN, _PY_NET, _PY_NATIVE, _PY_DYNAMIC),
        _language("perl", _PERL_SPAWN, _PERL_NET, _PERL_NATIVE, _PERL_DYNAMIC),
        _language("ruby", _RUBY_SPAWN, _RUBY_NET, _RUBY_NATIVE, _RUBY_DYNAMIC),
        _language("javascript", _JS_SPAWN, _JS_NET, _JS_NATIVE, _JS_DYNAMIC),
        _language("php", _PHP_SPAWN, _PHP_NET, _PHP_NATIVE, _PHP_DYNAMIC),
        _language("lua", _LUA_SPAWN, _LUA_NET, _LUA_NATIVE, r"\bload(?:string)?\s*\(|\bdofile\b"),
        _language("r", _R_SPAWN, _R_NET, _R_NATIVE, r"\beval\s*\(\s*parse|\bdo\.call\b"),
        _language("tcl", _TCL_SPAWN, _TCL_NET, _TCL_NATIVE, r"\beval\b|\buplevel\b"),
        _language("julia", _JULIA_SPAWN, _JULIA_NET, _JULIA_NATIVE,
                  r"\beval\s*\(|\bMeta\.parse\b|\binclude\s*\(|\b@eval\b"),
        _language("haskell", _HASKELL_SPAWN, _HASKELL_NET, _HASKELL_NATIVE),
        _language("lisp", _LISP_SPAWN, _LISP_NET, _LISP_NATIVE, _LISP_DYNAMIC),
        _language("gnuplot", _GNUPLOT_SPAWN, r"\burl\b", r"\bimport\b",
                  r"\bload\b|\beval\b|@", _GNUPLOT_WRITES),
        _language("m4", _M4_SPAWN, r"(?!)", r"(?!)", r"\binclude\b|\bsinclude\b|\bindir\b"),
        _language("dc", _DC_SPAWN, r"(?!)", r"(?!)"),
        _language("slang", _SLANG_SPAWN, r"\bsocket\b|\bconnect\b", r"\bimport\s*\(",
                  r"\beval\s*\(|\bevalfile\b"),
        _language("octave", _OCTAVE_SPAWN, _OCTAVE_NET, r"\bmex\b|\bloadlibrary\b",
                  r"\beval\s*\(|\bfeval\b|\bevalin\b|\brun\s*\("),
        _language("erlang", _ERLANG_SPAWN, _ERLANG_NET, r"\berlang:load_nif|\bload_nif\b",
                  r"\bCode\.eval|\bapply\s*\("),
        _language("jvm", _JVM_SPAWN, _JVM_NET, _JVM_NATIVE,
                  r"\beval\s*\(|\bload\s*\(|\bClass\.forName|\bScriptEngine"),
        _language("tex", _TEX_SPAWN, r"(?!)", r"(?!)", writes=_TEX_WRITES),
        _language("bpftrace", _BPF_SPAWN, r"(?!)", r"(?!)"),
        _language("sql", _SQL_SPAWN, r"(?i:\bhttpfs\b|\bdblink\b)", _SQL_NATIVE,
                  writes=_SQL_WRITES),
    )
}

_WHAT = {"spawn": "starts other programs", "network": "uses the network",
         "native": "loads native code", "dynamic": "picks what it runs by a name built at run time",
         "writes": "writes files it names itself"}  # fmt: skip
#: String literals of a path-like shape: absolute, home-relative, or with a directory.
#: Bare paths outside string literals, where a language needs no quotes (Tcl,
#: gnuplot, TeX) or the code is broken: home-relative, absolute, ``./``, or a
#: hidden directory (``.git/hooks/x``, ``~/.ssh``).
_BARE_PATH = re.compile(
    r"(?<![\w.\\$\])])(?:~/[\w./-]+|\.\.?/[\w./-]+|/[\w.-]+/[\w./-]+|(?:[\w-]+/)*\.[\w-]+/[\w./-]+)"
)
_LITERAL = re.compile(r"""(?:'((?:[^'\\\n]|\\.){1,512})'|"((?:[^"\\\n]|\\.){1,512})")""")
_PATHLIKE = re.compile(r"(?:/|~|\.\.?/|[\w.-]+/)[^\s'\"]*|\.\w[\w.-]*")
#: String literals joined into a path (``os.path.join('.git', 'hooks')``,
#: ``Path('.git') / 'hooks'``): the path is a mention too.
_JOINED = re.compile(
    r"""(?:'[^'\\\n]{1,256}'|"[^"\\\n]{1,256}")(?:\s*\)?\s*[/,]\s*(?:'[^'\\\n]{1,256}'|"[^"\\\n]{1,256}"))+"""
)
_PART = re.compile(r"'([^'\\\n]*)'|\"([^\"\\\n]*)\"")
#: Most mentions kept (a long program's literals are many; the first ones count).
MAX_MENTIONS = 64


@dataclass(frozen=True)
class CodeReading:
    findings: tuple[str, ...]
    mentions: tuple[str, ...]


def read_code(language: str, code: str, label: str) -> CodeReading:
    """What ``code`` (in ``language``) visibly does beyond computing, and the paths
    it names. ``label`` says whose code it is (``'python3 -c'``)."""
    lang = LANGUAGES.get(language)
    findings: list[str] = []
    if lang is not None:
        checks = {"spawn": lang.spawn, "network": lang.network, "native": lang.native}
        if lang.dynamic is not None:
            checks["dynamic"] = lang.dynamic
        if lang.writes is not None:
            checks["writes"] = lang.writes
        for kind, pattern in checks.items():
            found = pattern.search(code)
            if found is not None:
                findings.append(f"{label} code {_WHAT[kind]} ({found.group().strip()[:30]!r})")
    return CodeReading(tuple(findings), mentions(code))


def mentions(code: str) -> tuple[str, ...]:
    """The path-like string literals of ``code``, as written, then its bare paths."""
    out: dict[str, None] = {}
    for match in _LITERAL.finditer(code):
        text = match.group(1) if match.group(1) is not None else match.group(2)
        if _PATHLIKE.fullmatch(text):
            out[text] = None
            if len(out) >= MAX_MENTIONS:
                return tuple(out)
    for match in _BARE_PATH.finditer(code):
        out[match.group().rstrip(".")] = None
        if len(out) >= MAX_MENTIONS:
            return tuple(out)
    for match in _JOINED.finditer(code):
        parts = _PART.findall(match.group())
        joined = "/".join(x or y for x, y in parts)
        if _PATHLIKE.fullmatch(joined) and joined not in out:
            out[joined] = None
            if len(out) >= MAX_MENTIONS:
                break
    return tuple(out)
