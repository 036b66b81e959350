"""`kgqa serve` against hostile callers (issue 30), in process through its ASGI test client and against the
real test Neo4j: the bounded answerer cache, body and field limits, the Host check, the security headers,
what a caller beyond loopback is told (health, docs, errors without server paths) and a non-ASCII token.

KGs this module loads are named ``t_hard_*`` and dropped again; the shared KGs are only read."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from kgqa.service.app import (
    MAX_ANSWERERS,
    MAX_BODY_BYTES,
    MAX_NAME_CHARS,
    ServiceSettings,
    accepted_hosts,
    create_app,
    host_name,
    without_paths,
)

from tests.conftest import TEST_HOME

LOCAL = "http://127.0.0.1:8000"  # the Host header the bound address accepts
TOKEN = "s3cret-token"
NO_EMBEDDINGS_KG = "t_hard_noemb"


@pytest.fixture(scope="module")
def local(neo4j_env: dict[str, str], metaqa_kg: str) -> Iterator[TestClient]:
    with TestClient(create_app(), base_url=LOCAL, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture(scope="module")
def remote(neo4j_env: dict[str, str], metaqa_kg: str) -> Iterator[TestClient]:
    """The app as `kgqa serve --host 0.0.0.0` builds it (a token), reached by its loopback address."""
    settings = ServiceSettings("0.0.0.0", 8000, TOKEN, ("kgqa.example.org",))
    with TestClient(create_app(settings), base_url=LOCAL, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture(scope="module")
def unembedded(driver: Any) -> Iterator[str]:
    """A tiny KG loaded by the real loader with ``--no-embeddings`` (no vectors, no models)."""
    from kgqa.graph.kg import drop_kg
    from kgqa.loaders.load_types import LoadOptions
    from kgqa.loaders.pipeline import load

    from tests.test_load_parsers import METAQA

    drop_kg(driver, NO_EMBEDDINGS_KG)
    summary = load(LoadOptions("metaqa", [METAQA], kg=NO_EMBEDDINGS_KG, embeddings=False), driver=driver)
    assert summary.status == "complete" and summary.embedded_entities == 0, summary
    yield NO_EMBEDDINGS_KG
    drop_kg(driver, NO_EMBEDDINGS_KG)


def _one_line(response: Any) -> str:
    body = response.json()
    assert set(body) == {"error"} and "\n" not in body["error"] and "Traceback" not in body["error"], body
    return str(body["error"])


def test_the_answerer_cache_keeps_a_few_recently_used(local: TestClient) -> None:
    backend = local.app.state.backend  # type: ignore[attr-defined]
    # Each llm name is a new cache key (the issue: 5 MB names, kept for ever). The question links nothing,
    # so no LLM is called.
    for i in range(3 * MAX_ANSWERERS):
        response = local.post(
            "/api/ask", json={"question": "zzqv xxqj", "kg": "metaqa", "method": "sgrag", "llm": f"m{i}"}
        )
        assert response.status_code == 200, response.text
        assert backend.cached() <= MAX_ANSWERERS
    assert backend.cached() == MAX_ANSWERERS


def test_a_body_over_the_limit_is_413_declared_or_streamed(local: TestClient) -> None:
    big = b'{"question": "' + b"a" * MAX_BODY_BYTES + b'"}'
    response = local.post("/api/ask", content=big, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and _one_line(response).startswith("the request body is larger")

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"question": "'
        for _ in range(8):
            yield b"a" * (MAX_BODY_BYTES // 4)
        yield b'"}'

    response = local.post("/api/ask", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and _one_line(response).startswith("the request body is larger")
    response = local.post("/api/ask", content=b"{}", headers={"Content-Length": "-5"})
    assert response.status_code in (400, 413)


@pytest.mark.parametrize(
    "path,body,starts",
    [
        ("/api/ask", {"question": "who directed Kismet", "llm": "x" * (MAX_NAME_CHARS + 1)}, "llm: String"),
        ("/api/ask", {"question": "who directed Kismet", "kg": "x" * (MAX_NAME_CHARS + 1)}, "kg: String"),
        ("/api/ask", {"question": "x" * 2001}, "question: String should have at most 2000"),
        ("/api/verify", {"claim": "x" * 2001}, "claim: String should have at most 2000"),
        ("/api/verify", {"claim": "Kismet", "kg": "x" * (MAX_NAME_CHARS + 1)}, "kg: String"),
        ("/api/ask", {"question": "who directed Kismet", "k": 99999999999999999999}, "k: Input should be"),
    ],
)
def test_every_string_field_is_bounded(
    local: TestClient, path: str, body: dict[str, Any], starts: str
) -> None:
    response = local.post(path, json=body)
    assert response.status_code == 422 and _one_line(response).startswith(starts), response.text


def test_the_host_header_is_checked(neo4j_env: dict[str, str]) -> None:
    assert host_name("[::1]:8000") == "::1" and host_name("LocalHost:80") == "localhost"
    assert accepted_hosts("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert accepted_hosts("127.0.0.1", ("*",)) is None
    app = create_app(ServiceSettings(allowed_hosts=("kgqa.example.org",)))
    with TestClient(app, base_url=LOCAL) as client:
        assert client.get("/api/methods").status_code == 200
        assert client.get("/api/methods", headers={"Host": "localhost:8000"}).status_code == 200
        assert client.get("/api/methods", headers={"Host": "kgqa.example.org"}).status_code == 200
        # DNS rebinding: a page of attacker.example whose name now resolves to 127.0.0.1
        rebound = client.get("/api/methods", headers={"Host": "attacker.example:8000"})
        assert rebound.status_code == 421 and _one_line(rebound).startswith("this server does not answer")
        assert client.get("/", headers={"Host": "attacker.example"}).status_code == 421


def test_the_page_and_the_api_carry_csp_and_frame_headers(local: TestClient) -> None:
    for path in ("/", "/api/methods", "/docs", "/no-such-page"):
        response = local.get(path)
        csp = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp, path
        assert response.headers["x-frame-options"] == "DENY", path


def test_docs_are_served_from_vendored_assets(local: TestClient, remote: TestClient) -> None:
    page = local.get("/docs")
    assert page.status_code == 200 and "/static/vendor/swagger-ui-bundle.js" in page.text
    assert (
        "//" not in page.text.replace("<!--", "") and "<script>" not in page.text
    )  # nothing remote or inline
    for asset in ("/static/vendor/swagger-ui-bundle.js", "/static/vendor/swagger-ui.css", "/static/docs.js"):
        assert local.get(asset).status_code == 200, asset
    assert local.get("/openapi.json").json()["paths"]["/api/ask"]
    assert local.get("/redoc").status_code == 404  # ReDoc loads its script from a CDN: not served
    # Beyond loopback: no docs page (it cannot send the token), the spec only with the token.
    assert remote.get("/docs").status_code == 404
    assert remote.get("/openapi.json").status_code == 401
    assert remote.get("/openapi.json", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_health_beyond_loopback_says_only_up_or_down_without_the_token(
    local: TestClient, remote: TestClient
) -> None:
    brief = remote.get("/api/health")
    assert brief.status_code == 200 and brief.json() == {"status": "up"}
    full = remote.get("/api/health", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert full["status"] == "up" and full["database"]["uri"].startswith("bolt://") and "llm" in full
    assert local.get("/api/health").json()["database"]["ok"] is True  # loopback: the whole state


def test_a_non_ascii_authorization_header_is_401_not_500(remote: TestClient) -> None:
    for value in (
        "Bearer é".encode("latin-1"),
        "Bearer ключ".encode(),
        b"\xff\xfe",
        TOKEN.encode() + b"\x80",
    ):
        response = remote.get("/api/kgs", headers={"Authorization": value})
        assert response.status_code == 401, (value, response.text)
        assert _one_line(response).startswith("a bearer token is required")
    assert remote.get("/api/kgs", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_errors_beyond_loopback_name_no_server_path(remote: TestClient, unembedded: str) -> None:
    assert without_paths(f"no model is installed at {TEST_HOME}/models/kgs/x/gsr; run it") == (
        "no model is installed at <server path>; run it"
    )
    assert without_paths("LLM endpoint http://127.0.0.1:8080/v1 is down") == (
        "LLM endpoint http://127.0.0.1:8080/v1 is down"
    )
    auth = {"Authorization": f"Bearer {TOKEN}"}
    # sgrag on a KG without models: "no question classifier ... is installed at <the model folder>"
    response = remote.post(
        "/api/ask",
        json={"question": "who directed [Kismet]", "kg": unembedded, "method": "sgrag"},
        headers=auth,
    )
    assert response.status_code == 409, response.text
    line = _one_line(response)
    assert "<server path>" in line and str(TEST_HOME) not in line and "kgqa train all" in line
    # auto: the route's reasons in a 200 answer are scrubbed too
    response = remote.post(
        "/api/ask", json={"question": "who directed [Kismet]", "kg": unembedded}, headers=auth
    )
    assert response.status_code == 200 and str(TEST_HOME) not in response.text, response.text


# ------------------------------------------------------------------ item 3: a KG loaded with --no-embeddings
@pytest.mark.parametrize("method", ["auto", "sgrag", "frag", "subgraphrag", "simgrag", "gsr", "cosine"])
def test_every_method_works_or_says_why_without_embeddings(
    local: TestClient, unembedded: str, method: str
) -> None:
    response = local.post(
        "/api/ask", json={"question": "who directed [Kismet]", "kg": unembedded, "method": method}
    )
    assert response.status_code < 500, response.text
    if response.status_code != 200:
        line = _one_line(response)
        assert "kgqa index" in line or "kgqa train" in line, line
        return
    body = response.json()
    assert body["answers"] or body["explanation"]["reason"], body
    if method == "auto":  # the route left out what needs vectors, and said so
        assert "without embeddings" in body["explanation"]["reason"]
        assert {t["method"] for t in body["route"]["tried"]}.isdisjoint({"frag", "simgrag", "subgraphrag"})


def test_the_cli_says_one_line_without_embeddings(neo4j_env: dict[str, str], unembedded: str) -> None:
    from tests.conftest import run_kgqa

    done = run_kgqa("ask", "who directed [Kismet]", "--kg", unembedded, "--method", "frag")
    assert done.returncode == 4 and "Traceback" not in done.stderr, done.stderr  # cannot run here
    assert done.stderr.strip().splitlines() == [
        f"kgqa: error: method 'frag' compares stored vectors and KG '{unembedded}' was loaded without "
        f"embeddings; add them with `kgqa index --kg {unembedded}`, or use --method sgrag or gsr"
    ]
    done = run_kgqa("ask", "who directed [Kismet]", "--kg", unembedded)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "without embeddings" in done.stdout


def test_frag_itself_refuses_a_kg_without_relation_vectors(driver: Any, unembedded: str) -> None:
    from kgqa.core.errors import KgqaError
    from kgqa.retrieve.frag_ranking import relation_embeddings

    with pytest.raises(KgqaError, match="loaded without embeddings"):
        relation_embeddings(driver, unembedded)
