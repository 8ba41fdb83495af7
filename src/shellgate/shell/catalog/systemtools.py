"""Catalog family: system tools whose options run programs, write files or send data.

Hooks and settings that run a command (``certbot --pre-hook``, ``openvpn
--up``, ``aria2c --on-download-complete``, ``dhclient -sf``, ``dnsmasq
--conf-script``, ``enscript -I``, ``scrot -e``, ``tcpdump -z``, ``yt-dlp
--exec``, ``restic --password-command``, ``borg --rsh``, ``sshfs -o
ssh_command``, ``busctl --address=unixexec:``, ``plymouth --command``,
``csvtool call``) are programs or shell strings, segments of their own.
Output options are writes (``tcpdump -w``, ``nmap -oN``, ``dmidecode
--dump-bin``, ``gtester -o``, ``logrotate -l``, ``varnishncsa -w``, ``aria2c
-o``, ``lwp-download URL FILE``). Commands that take a program or
configuration language (``apache2 -C``, ``puppet apply -e``, ``dosbox -c``,
``lftp -c``, ``smbclient -c``, ``sysctl KEY=VALUE``, ``at``, ``run-parts``)
are findings, as are clients that send their words to a host of their
choosing (``whois -h``, ``finger user@host``, ``rlogin``, ``cancel -h``,
``ab`` against a host that is not this machine). Package installers run the
package's scripts (``dpkg -i``, ``rpm -i``, ``yum localinstall``, ``snap
install --dangerous``…): findings; ``rpm --eval '%(CMD)'`` and ``--pipe``
run a shell.
"""

from __future__ import annotations

import os
import re

from shellgate.shell.argv.engine import GNU, GNU_PREFIX, POSIX, Dialect, Parsed
from shellgate.shell.catalog.containers import RUN_OPTIONS, container_host
from shellgate.shell.catalog.entry import (
    Argv,
    Entry,
    Hook,
    Reading,
    Runs,
    flag,
    optional,
    val,
    values,
)
from shellgate.shell.catalog.read import add_program
from shellgate.shell.catalog.uploads import is_loopback, read_urls

#: Options spelled as one-dash words, never bundled (dhclient -sf, -cf).
ONE_DASH = Dialect("one-dash", bundles=False, abbreviations=False, single_dash_long=True)
_RUNS_LANGUAGE = "runs commands in a language of its own (they can run programs or read files)"
_INSTALLS = "installs a package (its scripts run, as root)"
_SENDS = "sends its words to a host of its choosing"


def _busctl(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for address in parsed.values("--address"):
        if address.startswith("unixexec:"):
            fields = dict(p.partition("=")[::2] for p in address[len("unixexec:") :].split(","))
            argv_words = [fields.get(f"argv{i}", "") for i in range(1, 10)]
            program = (fields.get("path", ""), *[w for w in argv_words if w])
            add_program(out, f"{argv[0]} --address program", program)


def _sshfs(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for options in parsed.values("-o"):
        for option in options.split(","):
            key, _, value = option.partition("=")
            if key in ("ssh_command", "ssh_program") and value:
                add_program(out, f"{argv[0]} -o {key} program", tuple(value.split()))


def _sysctl(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for word in parsed.words:
        if "=" in word:
            out.finding(f"'{argv[0]} {word[:30]}' changes a kernel setting")
        elif "/" in word:
            key = word.replace(".", "/") if "/" not in word.strip("/") else word
            out.mentions.append(os.path.normpath("/proc/sys/" + key))
            if "~" in word:
                out.mentions.append(word[word.index("~") :])
    if parsed.values("-p"):
        out.finding(f"'{argv[0]} -p' loads kernel settings from a file")


def _rpm(argv: Argv, parsed: Parsed, out: Reading) -> None:
    name = argv[0]
    for macro in parsed.values("-E"):
        if "%(" in macro or "%{lua" in macro or "%{expand" in macro:
            out.finding(f"'{name} --eval' expands a macro that runs a command")
    for command in parsed.values("--pipe"):
        out.payloads.append((f"{name} --pipe command", command))
    if parsed.has("-i", "-U", "-F", "--reinstall", "--restore"):
        out.finding(f"'{name}' {_INSTALLS}")


def _local_package(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``yum install ./x.rpm``, ``apt install ./x.deb``, ``pkg install ./x.txz``:
    a package from a file or URL (not a repository) runs its own scripts."""
    verb = parsed.words[0] if parsed.words else ""
    local = any("/" in w or w.endswith((".rpm", ".deb", ".txz", ".pkg", ".snap", ".apk"))
                for w in parsed.words[1:])
    if verb in ("install", "localinstall", "reinstall", "upgrade", "add") and (
        verb == "localinstall" or local
    ):
        out.finding(f"'{argv[0]} {verb}' {_INSTALLS}")


def _apt_options(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for setting in parsed.values("-o"):
        key = setting.partition("=")[0].lower()
        if "invoke" in key or "::options" in key or key.startswith(("dpkg::", "apt::build")):
            out.finding(f"'{argv[0]} -o {key[:40]}' sets a command apt runs")
    _local_package(argv, parsed, out)


def _snap(argv: Argv, parsed: Parsed, out: Reading) -> None:
    if parsed.has("--dangerous", "--devmode", "--classic", "--jailmode"):
        out.finding(f"'{argv[0]}' {_INSTALLS}")
    _local_package(argv, parsed, out)


def _remote(*hosts: str, at_operand: bool = False, user_host: bool = False) -> Hook:
    """A client whose ``hosts`` options (or first operand, or a ``user@host``
    operand) name the host its words go to: a finding unless it is this machine."""

    def hook(argv: Argv, parsed: Parsed, out: Reading) -> None:
        found = [v for option in hosts for v in parsed.values(option)]
        if at_operand and parsed.words:
            found.append(parsed.words[0])
        if user_host:
            found.extend(w.rsplit("@", 1)[1] for w in parsed.words if "@" in w)
        if any(not is_loopback(host) for host in found):
            out.finding(f"'{argv[0]}' {_SENDS}")

    return hook


def _ab(argv: Argv, parsed: Parsed, out: Reading) -> None:
    if any(not is_loopback(url) for url in parsed.words):
        out.finding(f"'{argv[0]}' {_SENDS} (and reads back what it serves)")


def _lwp(argv: Argv, parsed: Parsed, out: Reading) -> None:
    read_urls(argv[0], [w for w in parsed.words if "://" in w], out, sends_data=False)


def _nmap(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``-oN F``/``-oX F``/``-oG F``/``-oA BASE`` (glued too): written."""
    del parsed
    for i, word in enumerate(argv[1:], start=1):
        match = re.fullmatch(r"-o([NXSGAM])(.*)", word)
        if match is not None:
            target = match.group(2).lstrip("=") or (argv[i + 1] if i + 1 < len(argv) else "")
            if target and target != "-":
                out.writes.append(target)
        elif word.startswith("--script") and not word.startswith("--script-"):
            out.finding(f"'{argv[0]} --script' runs NSE scripts (Lua code)")
        elif word == "--interactive":
            out.finding(f"'{argv[0]} --interactive' reads commands (! runs a shell)")


def _csvtool_call(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``csvtool call CMD FILE``: CMD runs through the shell for each row."""
    del argv
    out.payloads.extend(("csvtool call command", w) for w in parsed.words[:1])


def _service(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``service NAME``: a NAME with a ``/`` runs a script of its choosing."""
    if parsed.words and "/" in parsed.words[0]:
        out.finding(f"'{argv[0]} {parsed.words[0][:30]}' runs a script by path")


def _xdg_user_dir(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """xdg-user-dir hands its word to the shell (``eval``)."""
    if any(re.search(r"[^\w-]", w) for w in parsed.words):
        out.finding(f"'{argv[0]}' hands its word to the shell (eval)")


def _gtester(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """gtester runs each operand as a test program."""
    for word in parsed.words:
        add_program(out, f"{argv[0]} test program", (word,))


_CTR_RUN = Entry(("run",), POSIX, RUN_OPTIONS, hooks=(container_host,), no_canonical=True)

ENTRIES: tuple[Entry, ...] = (
    Entry(("aria2c",), GNU, (*(val(f"--on-{e}", runs="program") for e in (
        "download-complete", "download-start", "download-pause", "download-stop",
        "download-error", "bt-download-complete")),
        val("-o --out", writes=True), val("-d --dir", writes=True),
        val("--conf-path", finding="reads a configuration (it names programs it runs)"),
        *values("-i --input-file --gid -s --split -x --max-connection-per-server")),
        hooks=(_lwp,)),
    Entry(("dhclient",), ONE_DASH, (val("-sf", runs="program"), val("-cf", finding="reads a "
                               "configuration (it names programs it runs)"),
                               val("-lf", writes=True), val("-pf", writes=True))),
    Entry(("dnsmasq",), GNU, (val("--conf-script", runs="shell"),
                              val("--dhcp-script", runs="program"),
                              val("-C --conf-file", finding="reads a configuration (it names "
                                  "programs it runs)"), val("--conf-dir"))),
    Entry(("enscript",), GNU, (val("-I --filter", runs="shell"), val("-o --output",
                                                                      writes=True))),
    Entry(("mail", "mailx", "bsd-mailx", "s-nail"), GNU, (
        val("-E --exec", finding="runs mail commands at start (! runs a shell)"),
        *values("-s --subject -a --attach -c -b -r -S"))),
    Entry(("openvpn",), GNU, (*(val(f"--{h}", runs="shell") for h in (
        "up", "down", "route-up", "route-pre-down", "ipchange", "client-connect",
        "client-disconnect", "learn-address", "auth-user-pass-verify", "tls-verify")),
        val("--config", finding="reads a configuration (it names programs it runs)"),
        val("--plugin", finding="loads a plugin (code)"), val("--log", writes=True),
        *values("--dev --script-security --remote --port --proto"))),
    Entry(("plymouth",), GNU, (val("--command", runs="shell"), val("--prompt"))),
    Entry(("restic",), GNU, (val("--password-command", runs="shell"),
                             *values("-r --repo -p --password-file --repository-file -o "
                                     "--option --cache-dir"))),
    Entry(("borg",), GNU, (val("--rsh", runs="shell"), val("--remote-path", runs="program"))),
    Entry(("scrot",), GNU, (val("-e --exec", runs="shell"), *values("-d --delay -q "
                                                                    "--quality"))),
    Entry(("sshfs",), GNU, (val("-o"), val("-p")), hooks=(_sshfs,)),
    Entry(("tcpdump",), GNU, (val("-z", runs="program"), val("-w", writes=True),
                              *values("-i -c -C -G -W -Z -r -s -E -F -T -y -j -B -V"))),
    Entry(("yt-dlp", "youtube-dl"), GNU, (
        val("--exec --exec-before-download", runs="shell"),
        val("--netrc-cmd", runs="shell"),
        val("--downloader --external-downloader", runs="program"),
        val("--config-location --config-locations", finding="reads a configuration (it "
            "names programs it runs)"),
        val("-o --output", writes=True), *values("-f --format -P --paths"))),
    Entry(("busctl",), GNU, (val("--address"), *values("-H --host -M --machine")),
          hooks=(_busctl,)),
    Entry(("certbot", "letsencrypt"), GNU, (
        *(val(f"--{h}", runs="shell") for h in ("pre-hook", "post-hook", "deploy-hook",
                                                "renew-hook", "manual-auth-hook",
                                                "manual-cleanup-hook")),
        val("-c --config", finding="reads a configuration (it names hooks it runs)"),
        *(val(f"--{d}", writes=True) for d in ("logs-dir", "work-dir", "config-dir")),
        *values("-d --domains -m --email --cert-name -a --authenticator -i --installer"))),
    Entry(("at", "batch"), GNU, (val("-f", finding="schedules the commands of a file"),
                                 *values("-q -t"), flag("-m"), flag("-M"), flag("-l"),
                                 flag("-d"), flag("-c")),
          finding="schedules commands (from stdin or a file) that run later"),
    Entry(("csvtool",), GNU_PREFIX,
          subcommands={"call": Entry(("call",), GNU, hooks=(_csvtool_call,))}),
    Entry(("run-parts",), GNU, (val("--regex"), val("-u --umask"), val("-a --arg"),
                                flag("--test"), flag("--list"), flag("--new-session")),
          finding="runs every program in a directory"),
    Entry(("service",), GNU, hooks=(_service,)),
    Entry(("xdg-user-dir",), GNU, hooks=(_xdg_user_dir,)),
    Entry(("sysctl",), GNU, (val("-p --load"), flag("-w --write"), flag("-n"), flag("-a")),
          hooks=(_sysctl,)),
    Entry(("dmidecode",), GNU, (val("--dump-bin", writes=True), val("--from-dump"),
                                *values("-d --dev-mem -s --string -t --type"))),
    Entry(("gtester",), GNU, (val("-o", writes=True), *values("-p -s --seed")),
          hooks=(_gtester,)),
    Entry(("logrotate",), GNU, (val("-l --log", writes=True), val("-s --state", writes=True),
                                *values("-m --mail"))),
    Entry(("nmap",), GNU, hooks=(_nmap,), no_canonical=True),
    Entry(("varnishncsa", "varnishlog"), GNU, (val("-w", writes=True),
                                               *values("-g -q -F -f -n -r -L -T"))),
    Entry(("puppet",), GNU_PREFIX, subcommands={"apply": Entry(("apply",), GNU, (
        val("-e --execute", finding="runs Puppet code (it runs commands and writes files)"),))}),
    Entry(("apache2", "apache2ctl", "apachectl", "httpd"), POSIX, (
        *(val(name, finding="runs a configuration directive (Include reads a file, "
              "LoadModule loads code)") for name in ("-C", "-c", "-f")),
        *values("-d -D -k -e -E -T"))),
    Entry(("dosbox",), ONE_DASH, (val("-c", finding="runs DOS commands with host directories "
                                 "mounted"), val("-conf"))),
    Entry(("lftp",), GNU, (val("-c", finding=_RUNS_LANGUAGE), val("-e", finding=_RUNS_LANGUAGE),
                           val("-f", finding=_RUNS_LANGUAGE), *values("-u -p")),
          hooks=(_remote(at_operand=True),)),
    Entry(("smbclient",), GNU, (val("-c --command", finding=_RUNS_LANGUAGE),
                                *values("-U --user -W --workgroup -p --port -I -m")),
          hooks=(_remote(at_operand=True),)),
    Entry(("perlbug",), GNU, (val("-e", runs="words"), *values("-s -r -c -b -f -F -t -C -S"))),
    Entry(("whois",), GNU, (val("-h --host"), val("-p --port")), hooks=(_remote("-h"),)),
    Entry(("finger",), GNU, hooks=(_remote(user_host=True),)),
    Entry(("rlogin", "rsh", "rexec"), GNU, (val("-l"), val("-p")),
          hooks=(_remote(at_operand=True),)),
    Entry(("cancel", "lp", "lpr"), GNU, (val("-h"), val("-u"), val("-d"), val("-H")),
          hooks=(_remote("-h", "-H"),)),
    Entry(("ab",), GNU, (val("-p", finding="sends a file as the request body (an upload)"),
                         val("-u", finding="sends a file as the request body (an upload)"),
                         *values("-n -c -t -s -b -B -T -v -w -x -y -z -C -H -A -P -X -g -e")),
          hooks=(_ab,)),
    Entry(("lwp-download",), GNU, writes=lambda parsed: parsed.words[1:2], hooks=(_lwp,)),
    Entry(("lwp-request", "GET", "POST", "HEAD", "lwp-mirror"), GNU, hooks=(_lwp,)),
    Entry(("dvips",), GNU, (optional("-R", finding="runs the commands a DVI file's specials "
                                     "name (-R0 turns shell escapes on)",
                                     when=lambda v: v == "0"), *values("-o -p -l -n -t -x -y")),
          no_canonical=True),
    Entry(("msgfilter",), GNU_PREFIX, (*values("-i --input -D --directory --width"),
                                       val("-o --output-file", writes=True),
                                       flag("-P --properties-input"),
                                       flag("-s --sort-output"), flag("--keep-header")),
          runs=Runs()),
    Entry(("ctr",), GNU_PREFIX, values("-a --address -n --namespace"),
          subcommands={"run": _CTR_RUN}),
    # -- installers ------------------------------------------------------------------
    Entry(("dpkg",), GNU, (*(flag(name, finding=_INSTALLS) for name in (
        "-i --install", "--unpack", "--configure", "-R --recursive")),
        *values("--root --admindir --instdir -D --debug --force-all"))),
    Entry(("rpm", "rpmdb", "rpmquery", "rpmverify"), GNU, (
        val("-E --eval"), val("--pipe"),
        val("--rcfile --macros", finding="reads macros (they can run commands)"),
        *(flag(name) for name in ("-i --install", "-U --upgrade", "-F --freshen",
                                  "--reinstall", "--restore", "-q --query", "-V --verify",
                                  "-e --erase", "-v", "-h --hash")),
        *values("--root --dbpath -D --define")), hooks=(_rpm,), no_canonical=True),
    Entry(("apt", "apt-get", "aptitude"), GNU, (
        val("-o --option"), val("-c --config-file", finding="reads a configuration (it "
                                 "names commands apt runs)"),
        *values("-t --target-release -a --host-architecture")), hooks=(_apt_options,)),
    Entry(("yum", "dnf", "microdnf", "zypper", "pkg", "apk"), GNU, (
        val("-c --config", finding="reads a configuration (its repositories, plugins)"),
        *values("--setopt --enablerepo --disablerepo --installroot -C --releasever")),
        hooks=(_local_package,)),
    Entry(("snap",), GNU, (flag("--dangerous"), flag("--devmode"), flag("--classic"),
                           flag("--jailmode"), *values("--channel --revision")),
          hooks=(_snap,)),
)  # fmt: skip
