// The page: ask, show the answers, draw the evidence, list the triplets.
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  let token = sessionStorage.getItem("kgqa-token");

  async function api(path, body) {
    const headers = { "Content-Type": "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    const response = await fetch(path, body ? { method: "POST", headers: headers, body: JSON.stringify(body) }
                                            : { headers: headers });
    if (response.status === 401) {
      token = window.prompt("This kgqa server needs its token ($KGQA_HOME/serve-token):") || "";
      sessionStorage.setItem("kgqa-token", token);
      if (token) return api(path, body);
    }
    const data = await response.json().catch(() => ({ error: response.statusText }));
    if (!response.ok) throw new Error(data.error || response.statusText);
    return data;
  }

  function option(select, value, label) {
    const o = document.createElement("option");
    o.value = value; o.textContent = label || value; select.appendChild(o);
  }

  async function init() {
    fetch("/api/health").then((r) => r.json()).then(function (h) {
      // Beyond loopback, without the token, the service says only up or down (no addresses).
      const up = h.status === "up";
      $("health").textContent = up ? "database up" : "database down";
      $("health").className = "health " + (up ? "ok" : "down");
      if (h.database) $("health").title = (h.database.error || h.database.uri || "") + " · LLM " + (h.llm.ok ? "up" : "down");
    }).catch(() => { $("health").textContent = "server unreachable"; $("health").className = "health down"; });
    try {
      const kgs = await api("/api/kgs");
      kgs.forEach((k) => option($("kg"), k.name, k.name + " (" + k.source + ")"));
      (await api("/api/methods")).forEach((m) => option($("method"), m));
    } catch (e) { showError(e.message); }
  }

  function showError(message) { $("error").textContent = message; $("error").hidden = false; }

  async function ask(event) {
    event.preventDefault();
    $("error").hidden = true;
    $("go").disabled = true; $("go").textContent = "Asking…";
    try {
      const result = await api("/api/ask", { question: $("question").value, kg: $("kg").value || null,
                                            method: $("method").value || "auto" });
      show(result);
    } catch (e) { showError(e.message); } finally { $("go").disabled = false; $("go").textContent = "Ask"; }
  }

  function show(result) {
    $("result").hidden = false;
    const answers = $("answers");
    answers.textContent = "";
    if (result.answers.length) {
      // each answer with the method's own score (its scale is the method's) and the chain it was read off
      const details = result.answer_details || [];
      result.answers.slice(0, 20).forEach(function (a, i) {
        const span = document.createElement("span"); span.className = "answer";
        const name = document.createElement("span"); name.className = "name"; name.textContent = a;
        span.appendChild(name);
        const detail = details[i];
        if (detail && detail.answer === a) {
          const score = document.createElement("span"); score.className = "score";
          score.textContent = detail.score.toFixed(2); span.appendChild(score);
          span.title = "score " + detail.score + " (" + result.method + ")" +
            (detail.chain ? " · chain " + detail.chain : " · no walk from the topic reaches it");
        }
        answers.appendChild(span);
      });
    } else {
      answers.textContent = "No answer: " + (result.explanation || "nothing found");
    }
    const ms = result.latency_ms.total ? Math.round(result.latency_ms.total) + " ms" : "";
    // the confidence is the method's calibrated probability that the first answer is right, when it has one
    const sure = result.confidence === null || result.confidence === undefined ? "" :
      " · confidence " + Math.round(100 * result.confidence) + " %";
    $("meta").textContent = "topic: " + (result.topic_entities.join(", ") || "none") + " · method " + result.method +
      " · kg " + result.kg + " · " + result.triplets.length + " triplets · " + ms + sure;
    const drawn = window.kgqaDrawEvidence($("graph"), result);
    window.kgqaLastGraph = drawn;  // for tests and the console
    const onPath = new Set(drawn.edges(".path").map((e) => e.data("id")));
    const body = document.querySelector("#triplets tbody");
    body.textContent = "";
    result.triplets.forEach(function (t, i) {
      const row = document.createElement("tr");
      if (onPath.has("e" + i)) row.className = "on-path";
      [String(i + 1), t[0], t[1], t[2]].forEach(function (text) {
        const cell = document.createElement("td"); cell.textContent = text; row.appendChild(cell);
      });
      body.appendChild(row);
    });
  }

  $("ask").addEventListener("submit", ask);
  init();
})();
