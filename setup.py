"""Package discovery for the one ``kgqa`` import namespace (the static metadata is in pyproject.toml).

Every top-level folder of the repository that is a Python package (it has an ``__init__.py``; ``tests`` and
``bench``, the measurements, aside) is ``kgqa.<folder>``, with all its subpackages. A folder inside one that
holds only data (the Cypher templates, the web page's assets) is a data package, shipped whole. Nothing is
listed by hand, so a new module or folder cannot be left out of the wheel.

The server's sources (``docker/server-assembly`` and ``procedures/``, which Maven builds at the first
``kgqa server start``) and the local LLM's installer (``scripts/install-llm``) ship as data files under
``<prefix>/share/kgqa``, so that an installed wheel starts a server without a checkout
(``core.config.shipped_source`` finds them).
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent
NOT_SHIPPED = {"tests", "bench"}
CACHES = ["__pycache__", "*.__pycache__"]

package_dir: dict[str, str] = {}
packages: list[str] = []
package_data: dict[str, list[str]] = {}
for top in sorted(
    p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name not in NOT_SHIPPED
):
    package_dir[f"kgqa.{top}"] = top
    for sub in ["", *find_namespace_packages(where=top, exclude=CACHES)]:
        name = f"kgqa.{top}.{sub}" if sub else f"kgqa.{top}"
        packages.append(name)
        folder = ROOT / top / sub.replace(".", "/")
        data = sorted(
            {f"*{p.suffix}" for p in folder.iterdir() if p.is_file() and p.suffix not in {".py", ".pyc"}}
        )
        if data:
            package_data[name] = data

SERVER_SOURCES = [
    ROOT / "docker" / "server-assembly" / "pom.xml",
    ROOT / "procedures" / "pom.xml",
    ROOT / "scripts" / "install-llm",
]
SERVER_SOURCES += sorted(p for p in (ROOT / "procedures" / "src" / "main").rglob("*") if p.is_file())
data_files: dict[str, list[str]] = {}
for source in SERVER_SOURCES:
    relative = source.relative_to(ROOT)
    data_files.setdefault(f"share/kgqa/{relative.parent.as_posix()}", []).append(relative.as_posix())

setup(
    package_dir=package_dir,
    packages=packages,
    package_data=package_data,
    data_files=sorted(data_files.items()),
)
