"""`kgqa serve` started as a user starts it, against the test Neo4j: every endpoint, the bad inputs, the token
beyond loopback, a stopped database, and the web page driven in a real headless Chromium."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TEST_HOME, free_port, run_kgqa, side_home

QUESTION = "who directed [Kismet]"


def call(base: str, path: str, body: Any = None, token: str | None = None, raw: bytes | None = None):  # type: ignore[no-untyped-def]
    """(status, parsed JSON body) of one request."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(base + path, data=data, method="POST" if data is not None else "GET")
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as failed:
        return failed.code, json.loads(failed.read() or b"null")


def start_serve(
    env: dict[str, str], host: str = "127.0.0.1", *extra: str
) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kgqa.cli", "serve", "--host", host, "--port", str(port), *extra],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"kgqa serve exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("kgqa serve did not listen within 60 s")


def stop_serve(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def served(neo4j_env: dict[str, str], metaqa_kg: str, question_classifiers: object) -> Iterator[str]:
    proc, base = start_serve(neo4j_env)
    yield base
    stop_serve(proc)


def test_health_reports_the_database_and_the_llm_apart(served: str) -> None:
    status, body = call(served, "/api/health")
    assert status == 200, body
    assert body["database"]["ok"] is True and body["database"]["uri"].startswith("bolt://")
    assert set(body["llm"]) >= {"ok", "endpoint"}


def test_kgs_and_methods(served: str) -> None:
    status, kgs = call(served, "/api/kgs")
    assert status == 200 and "metaqa" in {k["name"] for k in kgs}
    metaqa = next(k for k in kgs if k["name"] == "metaqa")
    assert metaqa["entities"] == 43_234 and isinstance(metaqa["loaded_at"], str)
    status, methods = call(served, "/api/methods")
    assert status == 200 and methods[0] == "auto" and {"sgrag", "simgrag", "frag"} <= set(methods)


@pytest.mark.parametrize("method", ["sgrag", "simgrag"])
def test_ask_gives_what_kgqa_ask_json_gives(served: str, method: str) -> None:
    status, body = call(served, "/api/ask", {"question": QUESTION, "kg": "metaqa", "method": method})
    assert status == 200, body
    cli = run_kgqa("ask", QUESTION, "--kg", "metaqa", "--method", method, "--json")
    assert cli.returncode == 0, cli.stderr
    expected = json.loads(cli.stdout)
    assert body["answers"] == expected["answers"] == ["William Dieterle"]
    assert body["triplets"] == expected["triplets"]
    assert set(body) == set(expected)


@pytest.mark.parametrize(
    "body,status,starts",
    [
        ({"question": ""}, 422, "question: must not be empty"),
        ({"question": "   "}, 422, "question: must not be empty"),
        ({"question": "x" * 2001}, 422, "question: String should have at most 2000 characters"),
        ({"question": 5}, 422, "question: Input should be a valid string"),
        ({}, 422, "question: Field required"),
        ({"question": "who directed Kismet", "k": 0}, 422, "k: Input should be greater than or equal to 1"),
        ({"question": "who directed Kismet", "k": "ten"}, 422, "k: Input should be a valid integer"),
        ({"question": "who directed Kismet", "method": "magic"}, 422, "method: Input should be"),
        (
            {"question": "who directed Kismet", "kg": "no-such-kg"},
            409,  # KgNotReady (kgqa.core.errors)
            "no knowledge graph named 'no-such-kg'",
        ),
    ],
)
def test_bad_input_is_a_4xx_with_one_line(
    served: str, body: dict[str, Any], status: int, starts: str
) -> None:
    got, answer = call(served, "/api/ask", body)
    assert got == status, answer
    assert set(answer) == {"error"} and "\n" not in answer["error"]
    assert answer["error"].startswith(starts), answer["error"]


def test_malformed_json_and_an_empty_claim(served: str) -> None:
    status, body = call(served, "/api/ask", raw=b"{not json")
    assert status == 422 and body == {"error": "body: the request is not valid JSON"}
    status, body = call(served, "/api/verify", {"claim": ""})
    assert status == 422 and body["error"] == "claim: must not be empty"


def test_an_llm_endpoint_that_is_down_is_a_502_and_an_unknown_path_a_404(
    neo4j_env: dict[str, str], metaqa_kg: str, question_classifiers: object
) -> None:
    closed = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    proc, base = start_serve({**neo4j_env, "OPENAI_BASE_URL": closed})
    try:
        status, body = call(
            base, "/api/ask", {"question": QUESTION, "kg": metaqa_kg, "method": "sgrag", "llm": "smollm2"}
        )
        assert status == 502 and body["error"].startswith(f"LLM endpoint {closed} is not reachable"), body
        status, body = call(base, "/api/health")
        assert status == 200 and body["llm"]["ok"] is False and body["llm"]["endpoint"] == closed
        status, body = call(base, "/api/no-such-thing")
        assert status == 404 and body == {"error": "Not Found"}
    finally:
        stop_serve(proc)


def test_verify(served: str) -> None:
    status, body = call(
        served, "/api/verify", {"claim": "Kismet was directed by William Dieterle", "kg": "metaqa"}
    )
    assert status == 200, body
    assert body["label"] == "supported" and ["Kismet", "directed_by", "William Dieterle"] in body["reason"]


def test_openapi_and_the_page(served: str) -> None:
    status, spec = call(served, "/openapi.json")
    assert status == 200 and {"/api/ask", "/api/verify", "/api/kgs", "/api/health"} <= set(spec["paths"])
    with urllib.request.urlopen(served + "/docs", timeout=30) as docs:
        assert docs.status == 200 and b"swagger" in docs.read().lower()
    with urllib.request.urlopen(served + "/", timeout=30) as page:
        assert b'id="question"' in page.read()


def test_a_token_is_required_beyond_loopback(neo4j_env: dict[str, str], metaqa_kg: str) -> None:
    proc, base = start_serve(neo4j_env, host="0.0.0.0")  # reached over loopback only
    try:
        status, body = call(base, "/api/kgs")
        assert status == 401 and body["error"].startswith("a bearer token is required")
        assert call(base, "/api/kgs", token="wrong")[0] == 401
        token_file = TEST_HOME / "serve-token"
        assert token_file.stat().st_mode & 0o777 == 0o600
        status, kgs = call(base, "/api/kgs", token=token_file.read_text().strip())
        assert status == 200 and "metaqa" in {k["name"] for k in kgs}
    finally:
        stop_serve(proc)


def test_several_workers_answer_alike(
    neo4j_env: dict[str, str], metaqa_kg: str, question_classifiers: object
) -> None:
    proc, base = start_serve(neo4j_env, "127.0.0.1", "--workers", "2")
    try:
        for _ in range(4):  # the workers share the port: several asks reach both
            status, body = call(base, "/api/ask", {"question": QUESTION, "kg": "metaqa", "method": "sgrag"})
            assert status == 200 and body["answers"] == ["William Dieterle"], body
        assert call(base, "/api/health")[0] == 200
    finally:
        stop_serve(proc)


def test_a_stopped_database_is_a_503_not_a_hang(neo4j_env: dict[str, str]) -> None:
    # Nothing listens on the port NEO4J_URI names: what a stopped server looks like to a client.
    down = {**neo4j_env, "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}", "NEO4J_PASSWORD": "x"}
    proc, base = start_serve(down)
    try:
        began = time.monotonic()
        status, body = call(base, "/api/health")
        assert status == 503 and body["database"]["ok"] is False
        assert body["database"]["error"].startswith("cannot reach Neo4j")
        status, body = call(base, "/api/ask", {"question": QUESTION})
        assert status == 503 and body["error"].startswith("cannot reach Neo4j"), body
        assert time.monotonic() - began < 30
    finally:
        stop_serve(proc)


def test_a_database_stopped_under_the_service_is_a_503_and_it_recovers(neo4j_env: dict[str, str]) -> None:
    from kgqa.graph.server import ManagedServer

    # A private managed server (its own home and port), so that the shared test server is never stopped.
    server = ManagedServer(home=side_home("serve"), port=free_port())
    server.start()
    env = {**neo4j_env, "NEO4J_URI": server.uri, "NEO4J_USER": "neo4j", "NEO4J_PASSWORD": server.password()}
    proc, base = start_serve(env)
    try:
        assert call(base, "/api/health")[0] == 200
        server.stop()
        began = time.monotonic()
        status, body = call(base, "/api/health")
        assert status == 503 and body["database"]["ok"] is False and "\n" not in body["database"]["error"]
        status, body = call(base, "/api/kgs")
        assert status == 503 and set(body) == {"error"} and "\n" not in body["error"], body
        # The service retries a query for KGQA_SERVE_RETRY_S (10 s), not the driver's default 30 s.
        assert time.monotonic() - began < 25, "a stopped database must not hang the service"
        server.start()
        status, body = call(base, "/api/health")
        assert status == 200 and body["database"]["ok"] is True, body
        assert call(base, "/api/kgs")[0] == 200
    finally:
        stop_serve(proc)
        server.stop()


# ---------------------------------------------------------------------------------------------- the page
def _chrome():  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,1000"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def _not_blank(png: Path) -> None:
    from PIL import Image

    with Image.open(png) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50, "the screenshot is (nearly) one colour"


def test_the_page_asks_and_draws_the_evidence(served: str, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as seen
    from selenium.webdriver.support.ui import Select, WebDriverWait

    browser = _chrome()
    try:
        browser.get(served + "/")
        wait = WebDriverWait(browser, 60)
        wait.until(lambda b: len(Select(b.find_element(By.ID, "method")).options) > 1)
        Select(browser.find_element(By.ID, "kg")).select_by_value("metaqa")
        Select(browser.find_element(By.ID, "method")).select_by_value("sgrag")
        browser.find_element(By.ID, "question").send_keys("who directed the films that Lee Pace starred in")
        browser.find_element(By.ID, "go").click()
        wait.until(seen.visibility_of_element_located((By.CSS_SELECTOR, "#answers .answer")))
        answers = {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#answers .answer .name")}
        assert answers == {"Neil LaBute", "Max Winkler", "Tarsem Singh"}, answers
        # each answer shows its score, and says which chain it was read off
        chips = browser.find_elements(By.CSS_SELECTOR, "#answers .answer")
        assert all(c.find_element(By.CSS_SELECTOR, ".score").text for c in chips)
        assert all("starred_actors<|directed_by>" in (c.get_attribute("title") or "") for c in chips)
        drawn = browser.execute_script(
            "const g = window.kgqaLastGraph; return {topics: g.nodes('.topic').map(n => n.data('label')),"
            " answers: g.nodes('.answer').map(n => n.data('label')), path: g.edges('.path').length};"
        )
        assert drawn["topics"] == ["Lee Pace"] and set(drawn["answers"]) == answers
        assert drawn["path"] >= 4  # Lee Pace -> each film -> its director
        rows = browser.find_elements(By.CSS_SELECTOR, "#triplets tbody tr")
        assert len(rows) >= 6 and browser.find_elements(By.CSS_SELECTOR, "#triplets tr.on-path")
        shot = tmp_path / "page.png"
        browser.save_screenshot(str(shot))
        _not_blank(shot)
    finally:
        browser.quit()


def test_ask_graph_writes_a_page_that_draws_offline(
    neo4j_env: dict[str, str], metaqa_kg: str, tmp_path: Path
) -> None:
    out = tmp_path / "evidence.html"
    proc = run_kgqa("ask", QUESTION, "--kg", "metaqa", "--method", "simgrag", "--graph", str(out))
    assert proc.returncode == 0, proc.stderr
    bad = run_kgqa("ask", QUESTION, "--kg", "metaqa", "--graph", str(tmp_path / "evidence.svg"))
    assert bad.returncode != 0 and "name the file .html" in bad.stderr.strip().splitlines()[-1]
    browser = _chrome()
    try:
        browser.get(out.as_uri())
        drawn = browser.execute_script(
            "const g = window.kgqaLastGraph; return [g.nodes('.topic').length, g.nodes('.answer').length];"
        )
        assert drawn == [1, 1]
    finally:
        browser.quit()
