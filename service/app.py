"""`kgqa serve`: the question-answering layer over HTTP, with a web page that draws the evidence as a graph.

One process keeps one driver (a connection pool) and one warm ``QuestionAnswerer`` per (method, KG, llm, k),
so a request pays for its question, not for loading models. Every failure is one line in ``{"error": …}``:
bad input is a 4xx, a database that is down or goes away is a 503 (the driver's own timeouts bound the wait),
and nothing else leaks a traceback.

Bound to loopback, anyone on the machine may ask. Bound elsewhere, every /api call needs
``Authorization: Bearer <token>``, the token kept like the Neo4j password: ``$KGQA_HOME/serve-token``, 0600.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import secrets
import threading
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from kgqa.core import config
from kgqa.core.errors import KgqaError, ModelMissing
from kgqa.graph.connection import connection_settings, failure_line, open_driver
from kgqa.loaders.kgs import list_kgs
from kgqa.qa.answering import QuestionAnswerer
from kgqa.qa.methods import METHODS
from kgqa.qa.verification import verify_claim
from neo4j import Driver
from neo4j.exceptions import DriverError, Neo4jError
from pydantic import AfterValidator, BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

STATIC = Path(__file__).resolve().parent / "static"
MAX_QUESTION_CHARS = 2000
MAX_K = 1000
RETRY_S = float(os.environ.get("KGQA_SERVE_RETRY_S", "10"))
MethodName = Literal[tuple(["auto", *METHODS])]  # type: ignore[valid-type]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


# A question or claim: some words, at most MAX_QUESTION_CHARS characters.
Text = Annotated[str, Field(max_length=MAX_QUESTION_CHARS), AfterValidator(_not_blank)]


class AskRequest(BaseModel):
    question: Text
    kg: str | None = None
    method: MethodName = "auto"  # type: ignore[valid-type]
    llm: str = "none"
    k: Annotated[int, Field(ge=1, le=MAX_K)] = 100


class VerifyRequest(BaseModel):
    claim: Text
    kg: str | None = None


@dataclass
class ServiceSettings:
    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None  # required of every /api call when set


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def service_token(home: Path | None = None) -> str:
    """The bearer token, made once (0600) beside the Neo4j password."""
    path = (home or config.kgqa_home()) / "serve-token"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it first
            return path.read_text().strip()
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(32) + "\n")
    return path.read_text().strip()


class Backend:
    """The driver and the warm answerers, shared by the request threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._driver: Driver | None = None
        self._answerers: dict[tuple[str, str | None, str, int], QuestionAnswerer] = {}

    def driver(self) -> Driver:
        with self._lock:
            if self._driver is None:
                # KgqaError (-> 503) when the database cannot be reached; a query whose server goes away is
                # retried for RETRY_S, then answered with a 503, not held for the driver's default 30 s.
                self._driver = open_driver(retry_s=RETRY_S)
            return self._driver

    def answerer(self, method: str, kg: str | None, llm: str, k: int) -> QuestionAnswerer:
        key = (method, kg, llm, k)
        found = self._answerers.get(key)
        if found is None:
            made = QuestionAnswerer(self.driver(), method, kg, llm, k)
            with self._lock:
                found = self._answerers.setdefault(key, made)
        return found

    def close(self) -> None:
        with self._lock:
            if self._driver is not None:
                self._driver.close()
                self._driver = None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message.strip().splitlines()[0] if message.strip() else "error"}, status)


UNREACHABLE = ("cannot reach Neo4j", "is not running", "authentication failed")


def _status_of(exc: BaseException) -> int:
    """503 when the database is away; 502 when the LLM endpoint fails; 409 when a model must be trained
    first; 400 for the caller's input."""
    if isinstance(exc, DriverError) or (isinstance(exc, Neo4jError) and exc.code and "Transient" in exc.code):
        return 503
    if isinstance(exc, KgqaError) and str(exc).startswith("LLM endpoint"):
        return 502
    if isinstance(exc, ModelMissing):
        return 409
    if isinstance(exc, KgqaError) and any(marker in str(exc) for marker in UNREACHABLE):
        return 503
    return 400


def create_app(settings: ServiceSettings | None = None) -> FastAPI:
    settings = settings or ServiceSettings()
    backend = Backend()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        backend.close()

    app = FastAPI(
        lifespan=lifespan,
        title="kgqa",
        version=config.PLUGIN_VERSION,
        description="Question answering over knowledge graphs, native to Neo4j. The same answers as "
        "`kgqa ask --json`.",
    )
    app.state.backend = backend

    def authorised(request: Request) -> None:
        if settings.token is None:
            return
        given = request.headers.get("authorization", "")
        if not secrets.compare_digest(given, f"Bearer {settings.token}"):
            raise HTTPException(401, "a bearer token is required (Authorization: Bearer <token>)")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        if first.get("type") == "json_invalid":
            return _error(422, "body: the request is not valid JSON")
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "body"
        message = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        return _error(422, f"{where}: {message}")

    @app.exception_handler(StarletteHTTPException)  # FastAPI's own and the router's 404 and 405
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(KgqaError)
    @app.exception_handler(DriverError)
    @app.exception_handler(Neo4jError)
    async def _failure(_request: Request, exc: Exception) -> JSONResponse:
        return _error(_status_of(exc), failure_line(exc) or str(exc))

    @app.get("/api/health", summary="The database and the LLM endpoint, each with its own state")
    def health() -> JSONResponse:
        database: dict[str, Any]
        try:
            uri = connection_settings()[0]
            backend.driver().verify_connectivity()
            database = {"ok": True, "uri": uri}
        except (KgqaError, DriverError, Neo4jError, OSError) as exc:
            database = {"ok": False, "error": failure_line(exc) or str(exc)}
        body = {"database": database, "llm": _llm_health()}
        return JSONResponse(body, 200 if database["ok"] else 503)

    @app.get("/api/kgs", summary="The loaded knowledge graphs", dependencies=[Depends(authorised)])
    def kgs() -> list[dict[str, Any]]:
        return [{k: _plain(v) for k, v in row.items()} for row in list_kgs(backend.driver())]

    @app.post(
        "/api/ask",
        summary="Answer a question (the JSON of `kgqa ask --json`)",
        dependencies=[Depends(authorised)],
    )
    def ask(body: AskRequest) -> dict[str, Any]:
        answerer = backend.answerer(body.method, body.kg, body.llm, body.k)
        return answerer.ask(body.question).to_json()

    @app.post(
        "/api/verify", summary="Check a claim (SimGRAG fact verification)", dependencies=[Depends(authorised)]
    )
    def verify(body: VerifyRequest) -> dict[str, Any]:
        return verify_claim(backend.driver(), body.claim, body.kg).to_json()

    @app.get("/api/methods", summary="The retrieval methods", dependencies=[Depends(authorised)])
    def methods() -> list[str]:
        return ["auto", *METHODS]

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def app_from_env() -> FastAPI:
    """The app as each of several worker processes builds it (``kgqa serve --workers N``): uvicorn imports it
    by name, so the settings come through the environment that `kgqa serve` set."""
    host = os.environ.get("KGQA_SERVE_HOST", "127.0.0.1")
    port = int(os.environ.get("KGQA_SERVE_PORT", "8000"))
    return create_app(ServiceSettings(host, port, None if is_loopback(host) else service_token()))


def _plain(value: Any) -> Any:
    """Neo4j temporal values (a KG's load time) as ISO strings; everything else as it is."""
    return value.iso_format() if hasattr(value, "iso_format") else value


def _llm_health() -> dict[str, Any]:
    """Whether the OpenAI-compatible endpoint answers ``GET /models`` within 2 s (no tokens are spent)."""
    from kgqa.answer.llm import default_base_url

    base = default_base_url().rstrip("/")
    try:
        with urllib.request.urlopen(f"{base}/models", timeout=2) as response:  # noqa: S310 - a configured URL
            return {"ok": 200 <= response.status < 300, "endpoint": base}
    except Exception as exc:  # noqa: BLE001 - any failure is the endpoint's state, reported in one line
        reason = str(getattr(exc, "reason", exc)).splitlines()[0] if str(exc) else type(exc).__name__
        return {"ok": False, "endpoint": base, "error": reason}
