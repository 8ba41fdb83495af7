"""Catalog family: container engines (docker, podman, nerdctl) and terraform.

Deny and ask rules see one spelling of each command (docs/analysis.md
"Canonical forms"): global options are dropped (``docker --log-level=error
run`` is ``docker run``), the management commands are spelled as the short
ones (``docker container run`` is ``docker run``, ``docker image build`` and
``docker buildx build`` are ``docker build``, ``docker image ls`` is ``docker
images``), and a boolean flag given a value is the flag, or nothing
(``--privileged=true`` is ``--privileged``; ``=false`` drops it). So
``docker run --privileged *`` meets every spelling of it, and
``terraform apply *`` meets ``terraform -chdir=infra apply -auto-approve``.

What a container run can reach on the host is read from its options:
``--privileged``, a host namespace (``--pid=host``…), an added capability, a
device, a security option that turns confinement off, and ``-H ssh://…`` /
``--config`` (a daemon over ssh, credential helpers) are findings. A bind mount
writes its host directory (``-v /:/mnt`` is a write of ``/``, which the write
rules decide; ``:ro`` only reads it); ``build --output``/``-o`` writes its
destination; ``--push`` publishes the image (a finding, as ``docker push``
would be a segment of its own). The command a container runs is the
container's, not the host's: it is no segment.

terraform's ``console`` reads expressions from stdin (``file()`` reads any
file): a finding; ``-plugin-dir`` loads providers from a directory of its
choosing; ``-out``, ``-state-out`` and ``-backup`` are written.
"""

from __future__ import annotations

from shellgate.shell.argv.canonical import operand_words, option_words
from shellgate.shell.argv.engine import CLAP, GO, POSIX, Dialect, Parsed
from shellgate.shell.catalog.entry import Argv, Entry, Reading, flag, val, values

#: pflag without interspersed flags (run, create, exec): options stop at the image.
PFLAG_PREFIX = POSIX
#: pflag with interspersed flags (build, ps, images…).
PFLAG = CLAP
_FALSE = frozenset({"false", "0", "f", "no"})


def bool_flag_words(argv: Argv, parsed: Parsed) -> list[str]:
    """Options and operands as canonical words, a boolean flag's ``=true`` dropped
    and a flag set ``=false`` left out (pflag and Go's flag package take both)."""
    del argv
    hits: list[tuple[str, str | None]] = []
    for hit in parsed.hits:
        if hit.opt is not None and hit.opt.inert:
            continue
        value = hit.value
        if hit.opt is not None and hit.opt.takes == 0 and value is not None:
            if value.lower() in _FALSE:
                continue
            value = None
        hits.append((hit.name, value))
    return [*option_words(hits, glued_short=True), *operand_words(parsed.words)]


# -- docker, podman, nerdctl ------------------------------------------------------------

_HOST = "gives the container the host's"
_CONFINEMENT = frozenset({"apparmor=unconfined", "seccomp=unconfined", "label=disable",
                          "label:disable", "systempaths=unconfined", "no-new-privileges=false"})


def _mount_source(spec: str, option: str) -> tuple[str, bool]:
    """(host path, read-only) of a ``-v SRC:DST[:ro]`` or ``--mount type=bind,src=…``."""
    if option == "--mount":
        fields = dict(part.partition("=")[::2] for part in spec.split(","))
        source = fields.get("source") or fields.get("src") or ""
        kind = fields.get("type", "volume")
        readonly = "readonly" in fields or "ro" in fields or fields.get("readonly") == "true"
        return (source if kind == "bind" else ""), readonly
    parts = spec.split(":")
    source = parts[0] if len(parts) > 1 else ""
    readonly = len(parts) > 2 and "ro" in parts[2].split(",")
    return source, readonly


def container_host(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """What a container run or create reaches on the host (see the module doc)."""
    name = argv[0]
    if parsed.has("--privileged") and not any(
        (h.value or "").lower() in _FALSE for h in parsed.hits if h.name == "--privileged"
    ):
        out.finding(f"'{name} --privileged' {_HOST} devices and every capability")
    for option in ("--pid", "--ipc", "--uts", "--userns", "--cgroupns"):
        if any(v == "host" for v in parsed.values(option)):
            out.finding(f"'{name} {option}=host' {_HOST} {option[2:]} namespace")
    for value in parsed.values("--network"):
        if value == "host":
            out.finding(f"'{name} --network=host' {_HOST} network (its local services)")
    if parsed.values("--cap-add"):
        out.finding(f"'{name} --cap-add' {_HOST} capabilities it names")
    if parsed.values("--device", "--device-cgroup-rule"):
        out.finding(f"'{name} --device' {_HOST} devices it names")
    if any(v.replace(" ", "") in _CONFINEMENT for v in parsed.values("--security-opt")):
        out.finding(f"'{name} --security-opt' turns the container's confinement off")
    if parsed.values("--volumes-from"):
        out.finding(f"'{name} --volumes-from' mounts another container's volumes")
    for hit in parsed.hits:
        if hit.name in ("-v", "--mount") and hit.value:
            source, readonly = _mount_source(hit.value, hit.name)
            if source.startswith(("/", ".", "~")):
                (out.mentions if readonly else out.writes).append(source)


RUN_OPTIONS = (
    *(flag(name) for name in (
        "--privileged", "-d --detach", "-i --interactive", "-t --tty", "--rm", "--init",
        "--read-only", "-P --publish-all", "--no-healthcheck", "--oom-kill-disable",
        "--sig-proxy", "-q --quiet", "--disable-content-trust", "--use-api-socket")),
    val("-v --volume"), val("--mount"), val("--cap-add"), val("--device"),
    val("--security-opt"), val("--pid"), val("--ipc"), val("--uts"), val("--userns"),
    val("--cgroupns"), val("--network --net"), val("--volumes-from"),
    val("--cidfile", writes=True),
    *values("-e --env --env-file -p --publish --name -w --workdir -u --user --cap-drop "
            "--entrypoint -h --hostname --add-host -l --label --label-file --log-driver "
            "--log-opt -m --memory --cpus --gpus --platform --pull --restart --runtime "
            "--shm-size --tmpfs --ulimit -a --attach --dns --dns-search --dns-option "
            "--health-cmd --health-interval --health-retries --health-timeout "
            "--health-start-period --stop-signal --stop-timeout --group-add --mac-address "
            "--ip --ip6 --link --sysctl --expose --isolation --storage-opt --oom-score-adj "
            "--memory-swap --memory-reservation --cpu-shares -c --cpuset-cpus --cpuset-mems "
            "--blkio-weight --domainname --detach-keys --annotation --pids-limit "
            "--network-alias --cgroup-parent --kernel-memory --cpu-period --cpu-quota "
            "--memory-swappiness --device-read-bps --device-write-bps --platform"),
)  # fmt: skip
_RUN = Entry(("run",), PFLAG_PREFIX, RUN_OPTIONS, hooks=(container_host,),
             canonical_words=bool_flag_words)
_CREATE = Entry(("create",), PFLAG_PREFIX, RUN_OPTIONS, hooks=(container_host,),
                canonical_words=bool_flag_words)
_EXEC = Entry(("exec",), PFLAG_PREFIX, (
    flag("--privileged"), flag("-d --detach"), flag("-i --interactive"), flag("-t --tty"),
    *values("-e --env --env-file -u --user -w --workdir --detach-keys")),
    hooks=(container_host,), canonical_words=bool_flag_words)  # fmt: skip


def _build(argv: Argv, parsed: Parsed, out: Reading) -> None:
    """``--output``/``-o``: ``type=local,dest=DIR``/``type=tar,dest=F`` or a bare path
    writes there; ``--push`` (or ``type=registry``/``push=true``) publishes."""
    name = argv[0]
    for spec in parsed.values("-o"):
        fields = dict(part.partition("=")[::2] for part in spec.split(",")) if "=" in spec else {}
        if not fields:
            out.writes.append(spec)
            continue
        if fields.get("dest"):
            out.writes.append(fields["dest"])
        if fields.get("type") == "registry" or fields.get("push", "").lower() == "true":
            out.finding(f"'{name} --output {spec[:30]}' publishes the image (as docker push)")
    if parsed.has("--push") and not any(
        (h.value or "").lower() in _FALSE for h in parsed.hits if h.name == "--push"
    ):
        out.finding(f"'{name} --push' publishes the image (as docker push)")
    if any(v.startswith(("security.insecure", "network.host")) for v in parsed.values("--allow")):
        out.finding(f"'{name} --allow' lets build steps leave their confinement")


_BUILD = Entry(
    ("build",),
    PFLAG,
    (
        val("-o --output"), flag("--push"), flag("--load"), flag("-q --quiet"),
        flag("--no-cache"), flag("--pull"), flag("--rm"), flag("--force-rm"),
        val("--iidfile", writes=True), val("--metadata-file", writes=True),
        val("--allow"),
        *values("-t --tag -f --file --build-arg --target --platform --label --cache-from "
                "--cache-to --secret --ssh --progress --network --builder --build-context "
                "--add-host --shm-size --ulimit --attest --sbom --provenance --annotation "
                "--call --check --cgroup-parent --isolation -m --memory --cpu-shares"),
    ),
    hooks=(_build,),
    canonical_words=bool_flag_words,
)


def _cp(parsed: Parsed) -> list[str]:
    """``docker cp CONTAINER:SRC DEST``: a local DEST is written."""
    words = parsed.words
    return [words[-1]] if len(words) == 2 and ":" in words[0] and ":" not in words[-1] else []


_CP = Entry(("cp",), PFLAG, (flag("-a --archive"), flag("-L --follow-link"),
                             flag("-q --quiet")), writes=_cp)
_PLAIN = Entry(("docker-command",), PFLAG, canonical_words=bool_flag_words)
#: Management commands and the short commands they stand for.
_CONTAINER = {"run": _RUN, "create": _CREATE, "exec": _EXEC, "cp": _CP,
              **dict.fromkeys(("start", "stop", "restart", "kill", "rm", "logs", "inspect",
                               "attach", "commit", "top", "wait", "pause", "unpause", "port",
                               "rename", "update", "diff", "export", "stats", "prune"), _PLAIN),
              **dict.fromkeys(("ls", "list", "ps"), Entry(("ps",), PFLAG, canonical_name="ps"))}
_IMAGE = {"build": _BUILD, "push": _PLAIN, "pull": _PLAIN, "history": _PLAIN, "import": _PLAIN,
          "inspect": _PLAIN, "load": _PLAIN, "save": _PLAIN, "tag": _PLAIN, "prune": _PLAIN,
          **dict.fromkeys(("rm", "remove"), Entry(("rmi",), PFLAG, canonical_name="rmi")),
          **dict.fromkeys(("ls", "list"), Entry(("images",), PFLAG, canonical_name="images"))}
_BUILDX = {"build": _BUILD, "b": _BUILD}
_DOCKER_SUBCOMMANDS = {
    **{verb: entry for verb, entry in _CONTAINER.items() if verb not in ("ls", "list")},
    **dict.fromkeys(("images", "rmi", "push", "pull", "tag", "login", "logout", "save", "load",
                     "history", "info", "version", "search", "events", "volume", "network",
                     "system", "compose", "context", "manifest", "trust", "plugin", "swarm",
                     "service", "stack", "secret", "config", "node"), _PLAIN),
    "build": _BUILD,
    "container": Entry(("container",), PFLAG_PREFIX, subcommands=_CONTAINER, canonical_group=True),
    "image": Entry(("image",), PFLAG_PREFIX, subcommands=_IMAGE, canonical_group=True),
    "buildx": Entry(("buildx",), PFLAG_PREFIX, values("--builder"), subcommands=_BUILDX,
                    canonical_group=True),
    "builder": Entry(("builder",), PFLAG_PREFIX, subcommands={"build": _BUILD},
                     canonical_group=True),
}  # fmt: skip


def _daemon(argv: Argv, parsed: Parsed, out: Reading) -> None:
    for host in parsed.values("-H"):
        if host.startswith("ssh://"):
            out.finding(f"'{argv[0]} -H {host[:30]}' reaches its daemon through ssh (it runs ssh)")


ENTRIES: tuple[Entry, ...] = (
    Entry(
        ("docker", "podman", "nerdctl"),
        PFLAG_PREFIX,
        (
            val("--log-level -l", inert=True), flag("-D --debug", inert=True),
            val("-H --host", inert=True), val("-c --context", inert=True),
            flag("--tls", inert=True), flag("--tlsverify", inert=True),
            *(val(name, inert=True) for name in ("--tlscacert", "--tlscert", "--tlskey")),
            val("--config", finding="reads another client configuration (its credential "
                "helpers are programs it runs)"),
            # podman's global options
            *(val(name, inert=True) for name in ("--root", "--runroot", "--storage-driver",
                                                  "--url", "--connection", "--cgroup-manager",
                                                  "--namespace", "--address")),
        ),
        subcommands=_DOCKER_SUBCOMMANDS,
        hooks=(_daemon,),
    ),
    Entry(
        ("terraform", "tofu"),
        GO,
        (val("-chdir", inert=True, chdir=True), flag("-help"), flag("-version")),
        subcommands={
            **dict.fromkeys(("apply", "plan", "destroy", "refresh", "import", "init",
                             "validate", "output", "show", "fmt", "graph", "get", "providers",
                             "state", "taint", "untaint", "workspace", "test", "force-unlock",
                             "login", "logout", "metadata", "modules", "version"),
                            Entry(("terraform-command",), Dialect("go-anywhere",
                                                                   abbreviations=False,
                                                                   bundles=False,
                                                                   single_dash_long=True), (
                                *(val(name, writes=True)
                                  for name in ("-out", "-state-out", "-backup")),
                                val("-plugin-dir", finding="loads providers (code) from a "
                                    "directory of its choosing"),
                                *(flag(name) for name in (
                                    "-auto-approve", "-destroy", "-refresh-only", "-json",
                                    "-no-color", "-compact-warnings", "-upgrade",
                                    "-reconfigure", "-migrate-state", "-force-copy", "-raw",
                                    "-recursive", "-check", "-diff", "-write", "-list",
                                    "-detailed-exitcode", "-input", "-lock", "-refresh")),
                                *values("-var -var-file -target -replace -state -parallelism "
                                        "-lock-timeout -backend-config -generate-config-out "
                                        "-exclude -filter -test-directory"),
                            ), canonical_words=bool_flag_words)),
            "console": Entry(("console",), GO, values("-state -var -var-file -plugin-dir"),
                             finding="reads expressions from stdin (file() reads any file)"),
        },
    ),
)  # fmt: skip
