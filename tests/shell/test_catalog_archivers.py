"""tar and rsync in the catalog (archivers) and ssh, scp, sftp, curl, wget (network).

Real ``analyse`` calls and real decisions under the two test policies: a program
or shell string named by an option is its own segment, so ``rm x`` is denied
wherever it hides; write options land in the segment's writes.
"""

from __future__ import annotations

import pytest

from shellgate.models import Segment
from shellgate.shell import analyse
from tests.shell.shell_policy_helpers import WORKDIR, decision

W = WORKDIR


def first(command: str) -> Segment:
    return analyse(command, workdir=W).segments[0]


PAYLOADS = [
    "tar -I 'rm x' -cf a.tar d",
    "tar --use-compress-program='rm x' -cf a.tar d",
    "tar --use-comp=rm -cf a.tar d",
    "tar --to-command='rm x' -xf a.tar",
    "tar --checkpoint=1 --checkpoint-action=exec='rm x' -cf a.tar d",
    "tar -F rm -cf a.tar d",
    "tar --info-script=rm -cf a.tar d",
    "tar --new-volume-script=rm -cf a.tar d",
    "tar --rsh-command=rm -cf h:a.tar d",
    "tar cIf rm a.tar d",
    "rsync -e 'rm x' a h:b",
    "rsync --rsh='rm x' a h:b",
    "rsync -ae rm a h:b",
    "rsync --rsync-path='rm x' a h:b",
    "ssh -o ProxyCommand='rm x' h",
    "ssh -oProxyCommand='rm x' h",
    "ssh -o 'proxycommand rm x' h",
    "ssh -o LocalCommand='rm x' -o PermitLocalCommand=yes h",
    "ssh h -o ProxyCommand='rm x' ls",
    "scp -S rm a h:b",
    "scp -o ProxyCommand='rm x' a h:b",
    "sftp -S rm h",
    "sftp -o ProxyCommand='rm x' h",
    "wget --use-askpass=rm http://x/",
]


@pytest.mark.parametrize("command", PAYLOADS)
def test_program_options_are_denied_with_a_denied_program(command: str) -> None:
    assert decision(command, "denylist") == "deny"


@pytest.mark.parametrize("command", PAYLOADS)
def test_program_options_are_never_allowed(command: str) -> None:
    assert decision(command, "allowlist") != "allow"


FINDINGS = [
    "ssh -F /tmp/cfg h", "ssh -I /tmp/p11.so h", "ssh -o PKCS11Provider=/tmp/x.so h",
    "ssh -o Include=/tmp/cfg h", "scp -F /tmp/cfg a h:b", "sftp -b /tmp/batch h",
    "wget -e output_document=x http://x/", "wget --config=/tmp/rc http://x/",
    "tar xf a.tar",  # extraction: members may land anywhere below
]  # fmt: skip


@pytest.mark.parametrize("command", FINDINGS)
def test_code_loading_or_hidden_writes_are_findings(command: str) -> None:
    assert first(command).findings


@pytest.mark.parametrize(
    "command",
    ["tar -tf x.tar", "tar tvf x.tar", "tar --list -f x.tar", "ssh h ls -la",
     "ssh -p 2222 -i key h", "wget -e robots=off -O - http://x/", "rsync -a src/ dst/"],
)  # fmt: skip
def test_reads_stay_clean(command: str) -> None:
    assert first(command).findings == ()


WRITES = [
    ("tar czf .git/hooks/x d", ".git/hooks/x"),
    ("tar -czf .git/hooks/x d", ".git/hooks/x"),
    ("tar --create --file=.git/hooks/x d", ".git/hooks/x"),
    ("tar xfC a.tar .git/hooks", ".git/hooks"),
    ("tar -xf a.tar --directory .git/hooks", ".git/hooks"),
    ("tar -cf a.tar --index-file=.git/hooks/x d", ".git/hooks/x"),
    ("tar -cg .git/hooks/x -f a.tar d", ".git/hooks/x"),
    ("rsync -a x/ .git/hooks/", ".git/hooks"),
    ("rsync --partial a .git/hooks/x", ".git/hooks/x"),
    ("rsync --log-file=.git/hooks/x a h:b", ".git/hooks/x"),
    ("rsync --write-batch=.git/hooks/x a b", ".git/hooks/x"),
    ("curl -o .git/hooks/x http://x", ".git/hooks/x"),
    ("curl -so.git/hooks/x http://x", ".git/hooks/x"),
    ("curl --head -o .git/hooks/x http://x", ".git/hooks/x"),
    ("curl -O --output-dir .git/hooks http://x/y", ".git/hooks/y"),
    ("curl --libcurl .git/hooks/x http://x", ".git/hooks/x"),
    ("wget -O.git/hooks/x http://x", ".git/hooks/x"),
    ("wget -P .git/hooks http://x/y", ".git/hooks/y"),
    ("wget --save-cookies=.git/hooks/x http://x", ".git/hooks/x"),
    ("ssh -E .git/hooks/x h", ".git/hooks/x"),
    ("ssh -o UserKnownHostsFile=.git/hooks/x h", ".git/hooks/x"),
    ("scp h:x .git/hooks/x", ".git/hooks/x"),
]


@pytest.mark.parametrize(("command", "target"), WRITES)
def test_write_options_land_in_writes(command: str, target: str) -> None:
    assert f"{W}/{target}" in first(command).write_paths


def test_remove_files_is_a_deletion() -> None:
    assert any("empties or deletes" in f for f in first("tar -c --remove-files -f a d").findings)


@pytest.mark.parametrize(
    ("command", "canonical"),
    [
        ("tar czf a.tgz d", "tar -c -fa.tgz -z d"),
        ("tar --create --gzip --file a.tgz d", "tar -c -fa.tgz -z d"),
        ("tar -v -xf a.tar", "tar -fa.tar -x"),
        ("rsync -av --progress a b", "rsync -a a b"),
        ("curl -sSL -o f http://x", "curl -L -of http://x"),
        ("ssh -p 22 h", "ssh -p22 h"),
    ],
)
def test_canonical_forms(command: str, canonical: str) -> None:
    assert first(command).canonical == (canonical,)
