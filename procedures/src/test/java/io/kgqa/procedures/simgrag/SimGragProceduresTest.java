package io.kgqa.procedures.simgrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.QueryExecutionException;

/** kgqa.simgrag.match through Cypher: its rows, and its one-line errors for bad patterns and options. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SimGragProceduresTest {

    private InProcessNeo4j neo4j;

    @BeforeAll
    void start() {
        neo4j = InProcessNeo4j.builder().withProcedure(SimGragProcedures.class).build();
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'test', status: 'complete', loaded_at: datetime('2024-01-02T00:00:00Z')})
                CREATE (k:Entity {kg: 'test', id: 'Kismet', name: 'Kismet'})
                CREATE (j:Entity {kg: 'test', id: 'Jennie', name: 'Portrait of Jennie'})
                CREATE (d:Entity {kg: 'test', id: 'Dieterle', name: 'William Dieterle'})
                CREATE (k)-[:directed_by]->(d), (j)-[:directed_by]->(d)
                """);
    }

    @AfterAll
    void stop() {
        neo4j.close();
    }

    private List<Map<String, Object>> match(List<Object> pattern, Map<String, Object> config) {
        return neo4j.database().executeTransactionally(
                "CALL kgqa.simgrag.match($pattern, $config) YIELD rank, distance, component, bindings, ids, triplets,"
                        + " expansions, exhaustive RETURN *",
                Map.of("pattern", pattern, "config", config), r -> r.stream().toList());
    }

    private String error(List<Object> pattern, Map<String, Object> config) {
        QueryExecutionException e = assertThrows(QueryExecutionException.class, () -> match(pattern, config));
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getMessage();
    }

    @Test
    void streamsMatchesWithBindingsAndTriplesInTheKgDirection() {
        List<Map<String, Object>> rows = match(List.of(List.of("Kismet", "?", "?director"),
                        Map.of("head", "?film", "relation", "?", "tail", "?director")),
                Map.of("kg", "test", "entities", Map.of("Kismet", List.of("Kismet"))));
        assertEquals(1, rows.size());
        Map<String, Object> row = rows.get(0);
        assertEquals(1L, row.get("rank"));
        assertEquals(0.0, (double) row.get("distance"), 1e-9);
        assertEquals(Map.of("Kismet", "Kismet", "?director", "William Dieterle", "?film", "Portrait of Jennie"),
                row.get("bindings"));
        assertEquals("Jennie", ((Map<?, ?>) row.get("ids")).get("?film"));
        assertEquals(List.of(List.of("Kismet", "directed_by", "William Dieterle"),
                List.of("Portrait of Jennie", "directed_by", "William Dieterle")), row.get("triplets"));
        assertEquals(true, row.get("exhaustive"));
        assertTrue((long) row.get("expansions") >= 3);
    }

    @Test
    void badPatternsGetOneLineErrorsNamingTheEdge() {
        Map<String, Object> cfg = Map.of("kg", "test");
        assertTrue(error(List.of(), cfg).contains("at least one edge"));
        assertTrue(error(List.of(List.of("a", "r")), cfg).startsWith("pattern edge 1 [a, r]: an edge is [head,"
                + " relation, tail]"));
        assertTrue(error(List.of(List.of("a", "r", "?b"), "x"), cfg).startsWith("pattern edge 2: an edge is"));
        assertTrue(error(List.of(List.of("a", "", "?b")), cfg).contains("the relation is empty"));
        assertTrue(error(List.of(List.of("a", "r", "a")), cfg).contains("self-loop"));
        assertTrue(error(List.of(List.of("a", "r", "?b"), List.of("?b", "r", "?c")), Map.of("kg", "test", "maxEdges", 1))
                .contains("at most 1 are allowed"));
        assertTrue(error(List.of(List.of("?a", "?", "?b")), cfg).contains("no known entity to start from"));
    }

    @Test
    void badOptionsNameTheKey() {
        List<Object> p = List.of(List.of("Kismet", "?", "?d"));
        assertTrue(error(p, Map.of("kg", "test", "K", 3)).startsWith("config has an unknown key 'K'"));
        assertTrue(error(p, Map.of("kg", "test", "k", 0)).startsWith("config.k must be"));
        assertTrue(error(p, Map.of("kg", "nope")).contains("nope"));
        assertTrue(error(p, Map.of("kg", "test", "entities", Map.of("?d", List.of("Kismet")))).contains("not a known"));
        assertTrue(error(p, Map.of("kg", "test", "entities", Map.of("Kismet", List.of("Missing"))))
                .contains("no entity with id 'Missing'"));
    }
}
