"""The secrets kgqa generates (the Neo4j password, the serve token), each kept in a private file.

A generated secret is letters and digits only. ``secrets.token_urlsafe`` may start with ``-``, and a command
line tool then reads the secret as an option: ``neo4j-admin dbms set-initial-password`` printed its usage and
exited 64 for one fresh home in 64. Letters and digits are also safe from quoting, comments and ``@file``
escapes.
"""

from __future__ import annotations

import os
import secrets
import string
from pathlib import Path

ALPHABET = string.ascii_letters + string.digits
SECRET_LENGTH = 32  # 62 symbols: about 190 bits


def new_secret(length: int = SECRET_LENGTH) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def read_or_make_secret(path: Path) -> str:
    """The secret in ``path``; made first (mode 0600, never readable by others) when the file is absent. When
    two processes race, the one that created the file wins and both return its secret."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(new_secret() + "\n")
    return path.read_text().strip()
