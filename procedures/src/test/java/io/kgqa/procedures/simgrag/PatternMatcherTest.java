package io.kgqa.procedures.simgrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;

/**
 * The SimGRAG search on a small hand-built KG in an in-process Neo4j, with candidate distances given by hand so
 * that every expected order can be worked out on paper:
 *
 * <pre>
 *   Kismet -directed_by-> Dieterle <-directed_by- Jennie -starred_actors-> Jones
 *   Kismet -starred_actors-> Dietrich <-starred_actors- Earrings -directed_by-> Leisen
 *   Kismet -release_year-> 1944;  Jennie -release_year-> 1948;  Earrings -release_year-> 1947
 *   Kismet -directed_by-> Elsewhere (an entity of KG 'other': never matched)
 * </pre>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PatternMatcherTest {

    private static final Label ENTITY = Label.label("Entity");
    private InProcessNeo4j neo4j;

    @BeforeAll
    void start() {
        neo4j = InProcessNeo4j.builder().build();
        neo4j.database().executeTransactionally("""
                UNWIND ['Kismet', 'Dieterle', 'Jennie', 'Jones', 'Dietrich', 'Earrings', 'Leisen', '1944', '1948', '1947'] AS id
                CREATE (:Entity {kg: 'test', id: id, name: id})
                """);
        neo4j.database().executeTransactionally("""
                MATCH (k:Entity {id: 'Kismet'}), (d:Entity {id: 'Dieterle'}), (j:Entity {id: 'Jennie'}),
                      (a:Entity {id: 'Jones'}), (m:Entity {id: 'Dietrich'}), (g:Entity {id: 'Earrings'}),
                      (l:Entity {id: 'Leisen'}), (y1:Entity {id: '1944'}), (y2:Entity {id: '1948'}), (y3:Entity {id: '1947'})
                CREATE (k)-[:directed_by]->(d), (j)-[:directed_by]->(d), (j)-[:starred_actors]->(a),
                       (k)-[:starred_actors]->(m), (g)-[:starred_actors]->(m), (g)-[:directed_by]->(l),
                       (k)-[:release_year]->(y1), (j)-[:release_year]->(y2), (g)-[:release_year]->(y3)
                CREATE (k)-[:directed_by]->(:Entity {kg: 'other', id: 'Elsewhere', name: 'Elsewhere'})
                """);
    }

    @AfterAll
    void stop() {
        neo4j.close();
    }

    private static PatternMatcher.Options options(int k, boolean ties) {
        return new PatternMatcher.Options(k, false, true, true, ties, 100, 1_000_000);
    }

    /** Runs the matcher on every component; each match as "cost|node=entity,...". */
    private List<String> run(List<PatternGraph.RawEdge> edges, Map<String, Map<String, Double>> nodes,
                             Map<Integer, Map<String, Double>> relations, PatternMatcher.Options options,
                             long[] expansions) {
        try (Transaction tx = neo4j.database().beginTx()) {
            PatternGraph pattern = PatternGraph.of(edges, 8);
            Map<Integer, Map<Node, Double>> candidates = new HashMap<>();
            for (int i = 0; i < pattern.nodes.size(); i++) {
                Map<String, Double> given = nodes.get(pattern.nodes.get(i).text());
                if (given != null) {
                    Map<Node, Double> found = new LinkedHashMap<>();
                    given.forEach((id, d) -> found.put(tx.findNode(ENTITY, "id", id), d));
                    candidates.put(i, found);
                }
            }
            List<String> out = new ArrayList<>();
            for (List<Integer> component : pattern.components()) {
                PatternMatcher.Result<Node> result = new PatternMatcher<>(new Neo4jKgView("test"), pattern, candidates,
                        relations, options).match(component);
                if (expansions != null) {
                    expansions[0] += result.expansions();
                }
                for (PatternMatcher.Match<Node> m : result.matches()) {
                    StringBuilder s = new StringBuilder(String.format(java.util.Locale.ROOT, "%.2f|", m.cost()));
                    for (int i = 0; i < pattern.nodes.size(); i++) {
                        Node n = m.binding().get(i);
                        if (n != null && pattern.nodes.get(i).variable()) {
                            s.append(pattern.nodes.get(i).text()).append('=').append(n.getProperty("id")).append(',');
                        } else if (n != null) {
                            s.append(n.getProperty("id")).append(',');
                        }
                    }
                    out.add(s.substring(0, s.length() - 1));
                }
            }
            return out;
        }
    }

    private static PatternGraph.RawEdge edge(String h, String r, String t) {
        return new PatternGraph.RawEdge(h, r, t);
    }

    @Test
    void topKInDistanceOrderAndNeverAnotherKg() {
        List<String> got = run(List.of(edge("film", "directed", "?who")),
                Map.of("film", Map.of("Kismet", 0.0, "Jennie", 0.35, "Earrings", 0.5)),
                Map.of(0, Map.of("directed_by", 0.1, "starred_actors", 0.4)), options(3, false), null);
        assertEquals(List.of("0.10|Kismet,?who=Dieterle", "0.40|Kismet,?who=Dietrich", "0.45|Jennie,?who=Dieterle"), got);
    }

    @Test
    void tiesWithTheKthAreKeptOnlyWhenAsked() {
        List<PatternGraph.RawEdge> p = List.of(edge("Dieterle", "directed", "?film"));
        Map<String, Map<String, Double>> nodes = Map.of("Dieterle", Map.of("Dieterle", 0.0));
        Map<Integer, Map<String, Double>> rel = Map.of(0, Map.of("directed_by", 0.2));
        assertEquals(List.of("0.20|Dieterle,?film=Jennie", "0.20|Dieterle,?film=Kismet"), run(p, nodes, rel, options(1, true), null));
        assertEquals(List.of("0.20|Dieterle,?film=Jennie"), run(p, nodes, rel, options(1, false), null));
    }

    @Test
    void pruningFindsTheSameMatchesWithFewerExpansions() {
        List<PatternGraph.RawEdge> p = List.of(edge("film", "r1", "?person"), edge("?person", "r2", "?other"),
                edge("?other", "r3", "?year"));
        Map<String, Map<String, Double>> nodes = Map.of("film",
                Map.of("Kismet", 0.0, "Jennie", 0.2, "Earrings", 0.3));
        Map<Integer, Map<String, Double>> rel = Map.of(
                0, Map.of("directed_by", 0.1, "starred_actors", 0.3, "release_year", 0.9),
                1, Map.of("directed_by", 0.1, "starred_actors", 0.3, "release_year", 0.9),
                2, Map.of("release_year", 0.05, "directed_by", 0.7, "starred_actors", 0.8));
        for (boolean ties : new boolean[] {false, true}) {
            long[] pruned = {0};
            long[] naive = {0};
            List<String> withPruning = run(p, nodes, rel, new PatternMatcher.Options(2, false, true, true, ties, 100,
                    1_000_000), pruned);
            List<String> without = run(p, nodes, rel, new PatternMatcher.Options(2, false, true, false, ties, 100,
                    1_000_000), naive);
            assertEquals(without, withPruning);
            assertEquals("0.25|Kismet,?person=Dieterle,?other=Jennie,?year=1948", withPruning.get(0));
            assertTrue(pruned[0] < naive[0], "pruned " + pruned[0] + " vs naive " + naive[0]);
        }
    }

    @Test
    void disconnectedPatternsAreMatchedOneComponentAtATime() {
        List<String> got = run(List.of(edge("Kismet", "directed", "?d"), edge("Earrings", "year", "?y")),
                Map.of("Kismet", Map.of("Kismet", 0.0), "Earrings", Map.of("Earrings", 0.0)),
                Map.of(0, Map.of("directed_by", 0.1), 1, Map.of("release_year", 0.2)), options(3, true), null);
        assertEquals(List.of("0.10|Kismet,?d=Dieterle", "0.20|Earrings,?y=1947"), got);
    }

    @Test
    void directionIsIgnoredByDefaultAndKeptWhenDirected() {
        List<PatternGraph.RawEdge> reversed = List.of(edge("?who", "directed", "Kismet"));
        Map<String, Map<String, Double>> nodes = Map.of("Kismet", Map.of("Kismet", 0.0));
        Map<Integer, Map<String, Double>> rel = Map.of(0, Map.of("directed_by", 0.1));
        assertEquals(List.of("0.10|?who=Dieterle,Kismet"), run(reversed, nodes, rel, options(3, true), null));
        PatternMatcher.Options directed = new PatternMatcher.Options(3, true, true, true, true, 100, 1_000_000);
        assertEquals(List.of(), run(reversed, nodes, rel, directed, null));
        assertEquals(List.of("0.10|Kismet,?who=Dieterle"),
                run(List.of(edge("Kismet", "directed", "?who")), nodes, rel, directed, null));
    }

    @Test
    void distinctPatternNodesMatchDistinctEntities() {
        List<PatternGraph.RawEdge> p = List.of(edge("Kismet", "directed", "?d"), edge("?d", "directed", "?film"));
        Map<String, Map<String, Double>> nodes = Map.of("Kismet", Map.of("Kismet", 0.0));
        Map<Integer, Map<String, Double>> rel = Map.of(0, Map.of("directed_by", 0.0), 1, Map.of("directed_by", 0.0));
        assertEquals(List.of("0.00|Kismet,?d=Dieterle,?film=Jennie"), run(p, nodes, rel, options(3, true), null));
        PatternMatcher.Options loose = new PatternMatcher.Options(3, false, false, true, true, 100, 1_000_000);
        assertEquals(List.of("0.00|Kismet,?d=Dieterle,?film=Jennie", "0.00|Kismet,?d=Dieterle,?film=Kismet"),
                run(p, nodes, rel, loose, null));
    }

    @Test
    void aCycleMustCloseOnTheSameEntity() {
        // two films sharing both a director and ... nothing else here: Kismet and Jennie share only Dieterle
        List<PatternGraph.RawEdge> p = List.of(edge("Kismet", "directed", "?d"), edge("?film", "directed", "?d"),
                edge("?film", "starred", "?a"), edge("Kismet", "starred", "?a"));
        Map<String, Map<String, Double>> nodes = Map.of("Kismet", Map.of("Kismet", 0.0));
        Map<Integer, Map<String, Double>> rel = Map.of(0, Map.of("directed_by", 0.0), 1, Map.of("directed_by", 0.0),
                2, Map.of("starred_actors", 0.0), 3, Map.of("starred_actors", 0.0));
        assertEquals(List.of(), run(p, nodes, rel, options(3, true), null));
    }

    @Test
    void aComponentWithoutAKnownNodeIsAnErrorNamingTheEdge() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> run(List.of(edge("UNKNOWN film", "?", "?x")), Map.of(), Map.of(), options(3, true), null));
        assertTrue(e.getMessage().contains("pattern edge 1 [UNKNOWN film, ?, ?x]"), e.getMessage());
    }

    @Test
    void theExpansionBudgetStopsTheSearchAndSaysSo() {
        try (Transaction tx = neo4j.database().beginTx()) {
            PatternGraph pattern = PatternGraph.of(List.of(edge("Dieterle", "?", "?film"), edge("?film", "?", "?x")), 8);
            Map<Integer, Map<Node, Double>> nodes = Map.of(0, Map.of(tx.findNode(ENTITY, "id", "Dieterle"), 0.0));
            PatternMatcher.Result<Node> r = new PatternMatcher<>(new Neo4jKgView("test"), pattern, nodes, Map.of(),
                    new PatternMatcher.Options(3, false, true, true, true, 100, 3)).match(List.of(0, 1));
            assertEquals(3, r.expansions());
            assertEquals(false, r.exhaustive());
        }
    }
}
