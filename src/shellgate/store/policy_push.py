"""What a push checks, what a pull writes, and a stored version as loaded sets.

A push reads the set's three files once, into memory, and checks exactly those
texts: they load (the loader gates use), the model is shellgate's, there is no
NUL (PostgreSQL ``TEXT`` cannot hold one), and every row of ``tests.csv`` passes
(:mod:`shellgate.policy.testrun`, the set alone, as ``shellgate policy test``).
Only then is anything written. Problems name ``DIR/<file>:<line>``.

The store sits below the decision, so it does not import the test runner: a
:class:`SetTester` is handed to :class:`~shellgate.store.policies.PolicyStore`,
and without one the installed runner is found through the ``shellgate.store``
entry point ``set-tester`` (pyproject.toml). Where none can be found a push is
refused: a set whose tests did not run is never stored.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from shellgate.errors import PolicyError, StoreError
from shellgate.hookspecs import PROJECT  # the one distribution whose registration counts
from shellgate.policy.loader import MAX_POLICY_BYTES, MODEL_FILE, POLICY_FILE, PolicySource

if TYPE_CHECKING:
    from shellgate.config import Config

TESTS_FILE = "tests.csv"
FILES = (MODEL_FILE, POLICY_FILE, TESTS_FILE)
#: Where the installed set tester is registered (pyproject.toml's entry points).
TESTER_GROUP, TESTER_NAME = "shellgate.store", "set-tester"


class SetTester(Protocol):
    """Runs every row of the set at ``copy`` (the pushed texts, written out) through
    the whole decision under ``config``; raises :class:`PolicyError` naming the
    first failure as ``shown`` (the pushed directory's tests.csv) and its line."""

    def __call__(self, copy: Path, shown: Path, config: Config | None) -> None: ...


def installed_tester() -> SetTester:
    """The test runner the installed shellgate registers, or :class:`PolicyError`.

    Only shellgate's own distribution may register it: another package declaring
    the same entry point cannot put its runner (a no-op, say) in the push's way.
    """
    from importlib import metadata

    for ep in metadata.entry_points(group=TESTER_GROUP, name=TESTER_NAME):
        if ep.dist is None or ep.dist.name != PROJECT:
            continue
        try:
            tester: SetTester = ep.load()
        except Exception as exc:  # a broken install: refuse, naming it
            raise PolicyError(f"not pushed: the set tester {ep.value} cannot be loaded: "
                              f"{type(exc).__name__}: {exc}") from exc
        return tester
    raise PolicyError(f"not pushed: no set tester is installed (entry point "
                      f"{TESTER_GROUP}:{TESTER_NAME}; reinstall shellgate), so tests.csv "
                      "cannot run")


@dataclass(frozen=True)
class StoredSet:
    """One set as a version holds it: the three files' texts."""

    name: str
    policy_csv: str
    tests_csv: str
    model_conf: str


def _read(directory: Path, name: str) -> str:
    file = directory / name
    try:
        if file.stat().st_size > MAX_POLICY_BYTES:
            raise PolicyError(f"{file}: larger than {MAX_POLICY_BYTES} bytes")
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = " (a pushed set carries its tests)" if name == TESTS_FILE else ""
        raise PolicyError(f"{file}: missing{hint}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{file}: cannot read: {exc}") from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise PolicyError(f"{file}:{line}: contains a NUL character")
    return text


def checked_set(
    name: str, directory: Path, config: Config | None, tester: SetTester
) -> StoredSet:
    """The set in ``directory`` as ``name``, or :class:`PolicyError` naming the problem."""
    from shellgate.policy.loader import read_policy_text

    if not directory.is_dir():
        raise PolicyError(f"{directory}: policy set directory not found")
    model, policy, tests = (_read(directory, f) for f in FILES)
    label = str(directory).rstrip("/") or "/"
    source, problems = read_policy_text(model, policy, label=label)
    if source is None:
        raise PolicyError(str(problems[0]))
    stored = StoredSet(name, policy, tests, model)
    run_tests(stored, directory, config, tester)
    return stored


def run_tests(
    stored: StoredSet, directory: Path, config: Config | None, tester: SetTester
) -> None:
    """Run ``stored``'s tests.csv over its rules alone; :class:`PolicyError` on a failure."""
    with tempfile.TemporaryDirectory(prefix="sg-push-") as tmp:
        copy = Path(tmp) / stored.name
        copy.mkdir()
        for file, text in zip(FILES, (stored.model_conf, stored.policy_csv, stored.tests_csv),
                              strict=True):
            (copy / file).write_text(text, encoding="utf-8")
        tester(copy, directory / TESTS_FILE, config)


def write_set(stored: StoredSet, directory: Path, *, force: bool) -> None:
    """Write the three files; refuse a directory that is not empty unless ``force``."""
    if directory.exists() and not directory.is_dir():
        raise PolicyError(f"{directory}: exists and is not a directory")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise PolicyError(f"{directory}: not empty (--force overwrites its model.conf, "
                          "policy.csv and tests.csv)")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for file, text in zip(FILES, (stored.model_conf, stored.policy_csv, stored.tests_csv),
                              strict=True):
            with (directory / file).open("w", encoding="utf-8", newline="") as out:
                out.write(text)
    except OSError as exc:
        raise PolicyError(f"{directory}: cannot write: {exc.strerror or exc}") from None


def store_sources(
    version: int, sets: dict[str, StoredSet], wanted: Sequence[str], display: str
) -> list[PolicySource]:
    """The sets in force from one version: ``wanted`` in order, else all by name.

    Raises :class:`StoreError` for an empty store, a wanted set the version lacks,
    or a stored set that no longer loads (each a reason to keep the last policy).
    """
    from shellgate.policy.loader import read_policy_text

    if version == 0:
        raise StoreError(f"policy store {display} has no policy yet (shellgate policy push)")
    names = list(wanted) if wanted else sorted(sets)
    sources: list[PolicySource] = []
    for name in names:
        if name not in sets:
            raise StoreError(f"policy store {display} version {version} has no set {name!r} "
                             "([policy] store_sets)")
        stored = sets[name]
        source, problems = read_policy_text(stored.model_conf, stored.policy_csv, label=name)
        if source is None:
            raise StoreError(f"policy store {display} version {version}: {problems[0]}")
        sources.append(source)
    return sources
