package io.kgqa.procedures.simgrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PatternGraphTest {

    private static PatternGraph.RawEdge edge(String h, String r, String t) {
        return new PatternGraph.RawEdge(h, r, t);
    }

    private static String error(List<PatternGraph.RawEdge> edges, int maxEdges) {
        return assertThrows(IllegalArgumentException.class, () -> PatternGraph.of(edges, maxEdges)).getMessage();
    }

    @Test
    void variablesAndWildcards() {
        PatternGraph p = PatternGraph.of(List.of(edge("UNKNOWN film 1", "?", "Kismet"), edge("?x", "directed", "unknown y")), 8);
        assertTrue(p.nodes.get(0).variable());
        assertEquals(false, p.nodes.get(1).variable());
        assertTrue(p.nodes.get(2).variable());
        assertTrue(p.nodes.get(3).variable());
        assertTrue(p.edges.get(0).wildcard());
        assertEquals(false, p.edges.get(1).wildcard());
    }

    @Test
    void badPatternsNameTheEdge() {
        assertTrue(error(List.of(), 8).contains("at least one edge"));
        assertTrue(error(List.of(edge("a", "r", "?b"), edge("?b", " ", "c")), 8)
                .startsWith("pattern edge 2 [?b,  , c]: the relation is empty"));
        assertTrue(error(List.of(edge(null, "r", "?b")), 8).contains("needs a head and a tail"));
        assertTrue(error(List.of(edge("a", "r", "a")), 8).contains("self-loop"));
        assertTrue(error(List.of(edge("a", "r", "?b"), edge("?b", "r", "?c")), 1).contains("at most 1"));
    }

    @Test
    void componentsGroupConnectedEdges() {
        PatternGraph p = PatternGraph.of(List.of(edge("a", "r", "?x"), edge("b", "r", "?y"), edge("?x", "r", "?z")), 8);
        assertEquals(List.of(List.of(0, 2), List.of(1)), p.components());
    }
}
