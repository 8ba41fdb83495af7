"""sed labels and delimiters, tar's remote archives and ``env -a`` that hid what runs.

Decided by the real decider over the allow-list fixture (``sed *``, ``env *``,
``tar -tf *`` allowed, ``rm -rf *`` denied; ``tests/shell/fixtures/allowlist``),
each bypass paired with proof from the real tool in a throwaway directory.

* GNU sed ends a label (``:``, ``b``, ``t``, ``T``) at a blank, ``;``, ``}`` or
  ``#``, and the next command may follow at once: ``:x e CMD`` runs CMD. The
  script reader skipped to the ``;`` or the newline, so ``e``/``w`` after a label
  were never seen (and ``:a w .git/config`` dodged the protected paths).
* ``s\\a\\b\\e``: a backslash is a delimiter like any other; the reader gave up on
  it and missed the flags. A bracket expression hides the delimiter
  (``s/[/]/X/;e CMD``), and ``s`` flags may be spaced out (``s/a/b/ e``).
* ``tar -f HOST:FILE`` runs rsh (or ``--rsh-command``) unless ``--force-local``.
* ``env -a NAME`` (uutils, newer GNU) takes a word: ``env -a ls rm -rf /`` runs rm.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.redteam.conftest import bash_runs
from tests.shell.allowlist_helpers import WORKDIR, effect, verdict

# -- sed: commands after a label, and delimiters the reader gave up on ------------

SED_RUNS = [
    pytest.param("sed ':x e touch /tmp/pwned' README.md", id="colon-label-blank-e"),
    pytest.param("sed ':a e' f", id="colon-label-bare-e"),
    pytest.param("sed ':x\te id' f", id="colon-label-tab-e"),
    pytest.param("sed ': x e id' f", id="colon-blank-label-e"),
    pytest.param("sed ':x:y e id' f", id="colon-in-label-e"),
    pytest.param("sed -n ':x\ntx e touch M' f", id="t-label-blank-e"),
    pytest.param("sed 'bx e id\n:x' f", id="b-label-blank-e"),
    pytest.param("sed 'Tx e id\n:x' f", id="T-label-blank-e"),
    pytest.param("sed 'v 4.2 e id' f", id="v-version-blank-e"),
    pytest.param("sed 's\\x\\y\\e' f", id="s-backslash-delimiter-e"),
    pytest.param("sed 's/[/]/X/;e id' f", id="s-bracket-hides-delimiter"),
    pytest.param("sed '/[/]/e id' f", id="address-bracket-hides-delimiter"),
    pytest.param("sed 's/a/id/ g e' f", id="s-spaced-flags-e"),
    pytest.param("sed 'y\\a\\b\\;e id' f", id="y-backslash-delimiter-e"),
    # a double-byte locale (GBK) reads `中\` as one character: the regex ends at
    # the first `/` and `e` is a flag there; UTF-8 reads `\/` as an escaped slash.
    pytest.param("sed 's/x中\\/A/e' f", id="s-legacy-multibyte-escape"),
]

#: ``w FILE`` hidden behind a label or an odd delimiter: the reader finds the write,
#: which the write: rules then decide like ``> FILE`` (the fixture's write:** allows
#: one in the workspace; the protected paths deny .git/config, SED_DENIED below).
SED_HIDDEN_WRITES = [
    pytest.param("sed -n 'tx w out.txt\n:x' f", id="t-label-blank-w"),
    pytest.param("sed -n 's\\a\\a\\w out.txt' f", id="s-backslash-delimiter-w"),
]

SED_DENIED = [
    pytest.param("sed -n ':a w .git/config' x", id="label-w-git-config"),
    pytest.param(
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned; false\\n'"
        " | sed -n ':a w .git/config' && git status",
        id="label-w-git-config-chain",
    ),
    pytest.param("sed -n 's\\a\\a\\w .git/config' x", id="s-backslash-w-git-config"),
    pytest.param("sed -n 'bx w .git/hooks/pre-commit\n:x' x", id="b-label-w-hooks"),
    # the e command's text is parsed as commands: rm -rf * is denied there too
    pytest.param("sed ':x e rm -rf /' f", id="label-e-rm"),
    pytest.param("sed 'e\\\nrm -rf /' f", id="e-text-on-next-line-rm"),
    pytest.param("sed ':x;bx e rm -rf /' f", id="b-label-e-rm"),
]

SED_PLAIN = [
    "sed 's/a/b/' f", "sed -n '2,$p' f", "sed '$d' f.txt", "sed -n '$p' f",
    "sed ':a;N;$!ba;s/\\n/ /g' f", "sed -e :a -e '$!N;s/\\n//;ta' f",
    "sed 's\\x\\y\\g' f", "sed 's/[/]/X/' f", "sed -n '/x/{:a;n;p;ba}' f",
    "sed 's/é/e/g' f", "sed '/^#/d;/^$/d' f", "sed 'y/abc/xyz/' f",
    "sed -n '/start/,/end/{/start/!{/end/!p}}' f",
]  # fmt: skip


@pytest.mark.parametrize("command", SED_RUNS)
def test_sed_commands_after_labels_and_odd_delimiters_are_not_allowed(command: str) -> None:
    assert effect(command) != "allow"


@pytest.mark.parametrize("command", SED_HIDDEN_WRITES)
def test_sed_writes_after_labels_and_odd_delimiters_are_writes(command: str) -> None:
    segment = verdict(command).segments[0].segment
    assert f"{WORKDIR}/out.txt" in segment.write_paths
    assert effect(command) == effect("echo x > out.txt")


@pytest.mark.parametrize("command", SED_DENIED)
def test_sed_writes_to_protected_paths_and_denied_e_commands_are_denied(command: str) -> None:
    assert effect(command) == "deny"


@pytest.mark.parametrize("command", SED_PLAIN)
def test_plain_sed_scripts_stay_allowed(command: str) -> None:
    assert effect(command) == "allow"


# GNU sed (the one on this machine) really runs and writes what the scripts hide.
SED_PROOFS = [
    pytest.param("echo x | sed ':x e touch MARKER'", id="colon-label-blank-e"),
    pytest.param("echo 'touch MARKER' | sed ':a e'", id="colon-label-bare-e"),
    pytest.param("echo x | sed -n ':x\ntx e touch MARKER'", id="t-label-blank-e"),
    pytest.param("echo x | sed 'v 4.2 e touch MARKER'", id="v-version-blank-e"),
    pytest.param("echo x | sed 's\\x\\touch MARKER\\e'", id="s-backslash-delimiter-e"),
    pytest.param("echo x | sed 's/[/]/X/;e touch MARKER'", id="s-bracket-hides-delimiter"),
    pytest.param("echo x | sed 's|x|touch MARKER| g e'", id="s-spaced-flags-e"),
    pytest.param("echo x | sed -n 'tx w MARKER\n:x'", id="t-label-blank-w"),
    pytest.param("echo a | sed -n 's\\a\\a\\w MARKER'", id="s-backslash-delimiter-w"),
    pytest.param("echo x | sed 'e\\\ntouch MARKER'", id="e-text-on-next-line"),
]


@pytest.mark.skipif(shutil.which("sed") is None, reason="needs GNU sed")
@pytest.mark.parametrize("command", SED_PROOFS)
def test_proof_gnu_sed_runs_what_the_script_hides(command: str, tmp_path: Path) -> None:
    assert bash_runs(command, tmp_path)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_proof_sed_label_write_to_git_config_runs_code(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path / "cwd")], check=True)
    chain = (
        "printf '[core]\\n\\tfsmonitor = touch MARKER; false\\n'"
        " | sed -n ':a w .git/config' && git status"
    )
    assert bash_runs(chain, tmp_path)


# -- tar: an archive on another host --------------------------------------------

TAR_REMOTE = [
    "tar -tf localhost:/x.tar", "tar -tf bob@localhost:x.tar", "tar -t --file=host:x.tar",
    "tar -t --fi host:x.tar", "tar tf host:x.tar", "tar -tfhost:x.tar",
    "tar -tf x.tar -f host:y.tar", "TAPE=localhost:x.tar tar -t",
]  # fmt: skip
TAR_LOCAL = [
    "tar -tf x.tar", "tar -tf ./host:x.tar", "tar -tf /srv/a:b.tar", "tar -tf :x.tar",
    "tar -tf host:x.tar --force-local",
]  # fmt: skip


@pytest.mark.parametrize("command", TAR_REMOTE)
def test_tar_remote_archive_is_not_allowed(command: str) -> None:
    assert effect(command) != "allow"


@pytest.mark.parametrize("command", TAR_LOCAL)
def test_tar_local_archive_stays_allowed(command: str) -> None:
    assert effect(command) == "allow"


def _rsh_stand_in(tmp_path: Path) -> Path:
    program = tmp_path / "rsh"
    program.write_text(f"#!/bin/sh\ntouch {tmp_path}/marker\n")
    program.chmod(0o755)
    return program


@pytest.mark.skipif(shutil.which("tar") is None, reason="needs GNU tar")
def test_proof_tar_runs_the_remote_shell_for_a_colon_archive(tmp_path: Path) -> None:
    rsh = _rsh_stand_in(tmp_path)
    assert bash_runs(f"timeout 5 tar -tf localhost:x.tar --rsh-command={rsh}", tmp_path)


@pytest.mark.skipif(shutil.which("tar") is None, reason="needs GNU tar")
@pytest.mark.parametrize(
    "archive", ["--force-local -f localhost:x.tar", "-f ./localhost:x.tar", "-f /a:b.tar"]
)
def test_proof_tar_stays_local_for_force_local_or_a_slash_first(
    archive: str, tmp_path: Path
) -> None:
    rsh = _rsh_stand_in(tmp_path)
    assert not bash_runs(f"timeout 5 tar -t {archive} --rsh-command={rsh}", tmp_path)


# -- env: options that take the word before the command ---------------------------

ENV_DENIED = [
    "env -a ls rm -rf /", "env --argv0=ls rm -rf /", "env --argv0 ls rm -rf /",
    "env -ia ls rm -rf /", "env -als rm -rf /", "env -f vars.env rm -rf /",
    "env -P /usr/bin rm -rf /",
]  # fmt: skip


@pytest.mark.parametrize("command", ENV_DENIED)
def test_env_option_arguments_do_not_hide_the_command(command: str) -> None:
    assert effect(command) == "deny"


def test_env_argv0_is_a_finding_and_plain_env_stays_allowed() -> None:
    assert effect("env -a foo ls") == "ask"  # busybox acts on argv[0]
    assert effect("env ls -l") == "allow"
