"""The secrets kgqa generates are ones every tool takes as an argument (no leading "-", no quoting)."""

from __future__ import annotations

import stat
import string
from pathlib import Path

from kgqa.core.secret_files import new_secret, read_or_make_secret


def test_a_generated_secret_is_letters_and_digits() -> None:
    allowed = set(string.ascii_letters + string.digits)
    secrets = [new_secret() for _ in range(5000)]  # token_urlsafe started with "-" about once in 64
    assert all(len(s) == 32 and set(s) <= allowed for s in secrets)
    assert len(set(secrets)) == len(secrets)


def test_the_secret_file_is_made_once_and_private(tmp_path: Path) -> None:
    path = tmp_path / "home" / "neo4j-password"
    first = read_or_make_secret(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_or_make_secret(path) == first and path.read_text() == first + "\n"


def test_a_secret_the_user_wrote_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "serve-token"
    path.write_text("-my own token\n")
    assert read_or_make_secret(path) == "-my own token"
