// The evidence of one answer as a graph: topic entities, answers, and the shortest path from a topic to each
// answer highlighted. Shared by the web page and by `kgqa ask --graph FILE.html`, which inlines this file.
(function (global) {
  "use strict";

  // Nodes, edges and which of them lie on a topic -> answer path, from the `kgqa ask --json` object.
  function evidenceGraph(result) {
    const topics = new Set(result.topic_entities || []);
    const answers = new Set(result.answers || []);
    const nodes = new Map();
    const edges = [];
    const adjacent = new Map();
    const node = (name) => {
      if (!nodes.has(name)) {
        nodes.set(name, { id: "n" + nodes.size, name: name, topic: topics.has(name), answer: answers.has(name) });
        adjacent.set(name, []);
      }
      return nodes.get(name);
    };
    (result.triplets || []).forEach(function (t, i) {
      const head = node(t[0]), tail = node(t[2]);
      edges.push({ id: "e" + i, source: head.id, target: tail.id, relation: t[1], index: i, path: false });
      adjacent.get(t[0]).push([t[2], i]);
      adjacent.get(t[2]).push([t[0], i]);
    });
    topics.forEach((name) => { if (nodes.has(name)) node(name); });
    // Breadth-first from every topic at once (either direction): distance rings and a parent edge per node.
    const dist = new Map(), parent = new Map(), queue = [];
    topics.forEach((name) => { if (nodes.has(name)) { dist.set(name, 0); queue.push(name); } });
    for (let q = 0; q < queue.length; q++) {
      const here = queue[q];
      adjacent.get(here).forEach(function (pair) {
        if (!dist.has(pair[0])) { dist.set(pair[0], dist.get(here) + 1); parent.set(pair[0], [here, pair[1]]); queue.push(pair[0]); }
      });
    }
    answers.forEach(function (name) {
      let at = name;
      while (parent.has(at)) { const step = parent.get(at); edges[step[1]].path = true; at = step[0]; }
    });
    const onPath = new Set();
    edges.forEach((e) => { if (e.path) { onPath.add(e.source); onPath.add(e.target); } });
    nodes.forEach((n, name) => { n.distance = dist.has(name) ? dist.get(name) : 99; n.path = onPath.has(n.id); });
    return { nodes: Array.from(nodes.values()), edges: edges };
  }

  function drawEvidence(container, result) {
    const g = evidenceGraph(result);
    const big = g.nodes.length > 80;
    const elements = g.nodes.map((n) => ({
      data: { id: n.id, label: n.name, distance: n.distance },
      classes: [n.topic ? "topic" : "", n.answer ? "answer" : "", n.path ? "path" : ""].join(" ").trim(),
    })).concat(g.edges.map((e) => ({
      data: { id: e.id, source: e.source, target: e.target, label: e.relation },
      classes: e.path ? "path" : "",
    })));
    return cytoscape({
      container: container,
      elements: elements,
      wheelSensitivity: 0.3,
      maxZoom: 1.4,  // a graph of a few nodes stays at reading size instead of filling the box
      style: [
        { selector: "node", style: { "background-color": "#9aa3b5", width: 14, height: 14,
          label: big ? "" : "data(label)", "font-size": 10, color: "#1d2330", "text-valign": "bottom" } },
        { selector: "node.path", style: { label: "data(label)", width: 18, height: 18, "background-color": "#6d7890" } },
        { selector: "node.answer", style: { "background-color": "#f0a500", width: 24, height: 24, label: "data(label)",
          "font-weight": "bold" } },
        { selector: "node.topic", style: { "background-color": "#2f6fdf", width: 28, height: 28, label: "data(label)",
          "font-weight": "bold" } },
        { selector: "edge", style: { width: 1, "line-color": "#c5cad4", "curve-style": "bezier",
          "target-arrow-shape": "triangle", "target-arrow-color": "#c5cad4", "arrow-scale": 0.6,
          label: big ? "" : "data(label)", "font-size": 9, color: "#7a8396", "text-rotation": "autorotate",
          "text-background-color": "#fcfcfd", "text-background-opacity": 1, "text-background-padding": 1 } },
        { selector: "edge.path", style: { width: 3, "line-color": "#d94f2b", "target-arrow-color": "#d94f2b",
          label: "data(label)", color: "#a8391c", "z-index": 10 } },
      ],
      // Rings by distance from the topic entities: readable at a few hundred nodes, and fast.
      layout: { name: "concentric", concentric: (n) => 100 - n.data("distance"), levelWidth: () => 1,
        minNodeSpacing: big ? 4 : 40, animate: false },
    });
  }

  global.kgqaEvidenceGraph = evidenceGraph;
  global.kgqaDrawEvidence = drawEvidence;
})(window);
