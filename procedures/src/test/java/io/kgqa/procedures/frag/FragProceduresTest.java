package io.kgqa.procedures.frag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * kgqa.frag.neighbourhood through Cypher on an in-process Neo4j:
 *
 * <pre>
 *   Kismet -directed_by-> Dieterle <-directed_by- Jennie -starred_actors-> Jones
 *   Kismet -starred_actors-> Dietrich <-starred_actors- Earrings -directed_by-> Leisen
 *   Kismet -has_genre-> Drama <-has_genre- Film0 .. Film4      (Drama: degree 6, a hub when maxDegree is 5)
 *   Kismet -related-> Elsewhere (KG 'other')
 * </pre>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FragProceduresTest {

    private InProcessNeo4j neo4j;

    @BeforeAll
    void start() {
        neo4j = InProcessNeo4j.builder().withProcedure(FragProcedures.class).build();
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'test'})
                CREATE (k:Entity {kg: 'test', id: 'Kismet', name: 'Kismet'})
                CREATE (d:Entity {kg: 'test', id: 'Dieterle', name: 'Dieterle'})
                CREATE (m:Entity {kg: 'test', id: 'Dietrich', name: 'Dietrich'})
                CREATE (j:Entity {kg: 'test', id: 'Jennie', name: 'Jennie'})
                CREATE (a:Entity {kg: 'test', id: 'Jones', name: 'Jones'})
                CREATE (g:Entity {kg: 'test', id: 'Earrings', name: 'Earrings'})
                CREATE (l:Entity {kg: 'test', id: 'Leisen', name: 'Leisen'})
                CREATE (drama:Entity {kg: 'test', id: 'Drama', name: 'Drama'})
                CREATE (x:Entity {kg: 'other', id: 'Elsewhere', name: 'Elsewhere'})
                CREATE (k)-[:directed_by]->(d)
                CREATE (k)-[:starred_actors]->(m)
                CREATE (k)-[:has_genre]->(drama)
                CREATE (k)-[:related]->(x)
                CREATE (j)-[:directed_by]->(d)
                CREATE (j)-[:starred_actors]->(a)
                CREATE (g)-[:starred_actors]->(m)
                CREATE (g)-[:directed_by]->(l)
                WITH drama
                UNWIND range(0, 4) AS i
                CREATE (:Entity {kg: 'test', id: 'Film' + i, name: 'Film' + i})-[:has_genre]->(drama)
                """);
    }

    @AfterAll
    void stop() {
        if (neo4j != null) {
            neo4j.close();
        }
    }

    private Map<String, Object> neighbourhood(List<?> ids, Map<String, Object> config) {
        List<Map<String, Object>> rows = neo4j.rows("CALL kgqa.frag.neighbourhood('test', $ids, $config) "
                + "YIELD nodes, expandable, edges "
                + "RETURN [n IN nodes | n.id] AS ids, expandable, edges", Map.of("ids", ids, "config", config));
        assertEquals(1, rows.size());
        return rows.get(0);
    }

    @SuppressWarnings("unchecked")
    private static List<String> ids(Map<String, Object> row) {
        return (List<String>) row.get("ids");
    }

    @SuppressWarnings("unchecked")
    private static Set<String> edges(Map<String, Object> row) {
        List<String> ids = ids(row);
        Set<String> out = new HashSet<>();
        for (List<Object> edge : (List<List<Object>>) row.get("edges")) {
            out.add(ids.get(((Long) edge.get(0)).intValue()) + "|" + edge.get(2) + "|"
                    + ids.get(((Long) edge.get(1)).intValue()));
        }
        assertEquals(((List<?>) row.get("edges")).size(), out.size(), "each relationship once");
        return out;
    }

    @Test
    void oneHopIsTheTopicAndItsEntityNeighbours() {
        Map<String, Object> row = neighbourhood(List.of("Kismet"), Map.of("hops", 1));
        assertEquals("Kismet", ids(row).get(0));
        assertEquals(Set.of("Kismet", "Dieterle", "Dietrich", "Drama"), new HashSet<>(ids(row)));
        // Only the topic is expanded: the last layer never is.
        assertEquals(List.of(true, false, false, false), row.get("expandable"));
        assertEquals(Set.of("Kismet|directed_by|Dieterle", "Kismet|starred_actors|Dietrich", "Kismet|has_genre|Drama"),
                edges(row));
    }

    @Test
    void twoHopsWithAHubThatIsNotExpanded() {
        Map<String, Object> row = neighbourhood(List.of("Kismet"), Map.of("hops", 2, "maxDegree", 5));
        // Drama (6 relationships) joins at hop 1 but its five films are not reached through it.
        assertEquals(Set.of("Kismet", "Dieterle", "Dietrich", "Drama", "Jennie", "Earrings"), new HashSet<>(ids(row)));
        List<String> ids = ids(row);
        @SuppressWarnings("unchecked")
        List<Boolean> expandable = (List<Boolean>) row.get("expandable");
        assertEquals(false, expandable.get(ids.indexOf("Drama")), "a hub");
        assertEquals(true, expandable.get(ids.indexOf("Dieterle")));
        assertEquals(false, expandable.get(ids.indexOf("Jennie")), "the last layer");
        assertEquals(Set.of("Kismet|directed_by|Dieterle", "Kismet|starred_actors|Dietrich", "Kismet|has_genre|Drama",
                "Jennie|directed_by|Dieterle", "Earrings|starred_actors|Dietrich"), edges(row));
        // Without the hub limit the films come in through Drama.
        assertEquals(11, ids(neighbourhood(List.of("Kismet"), Map.of("hops", 2))).size());
    }

    @Test
    void capsKeepTheBestConnectedNodesFirst() {
        // Dieterle is touched from both topics, Dietrich, Drama and Jones from one: a one-node layer keeps Dieterle.
        Map<String, Object> row = neighbourhood(List.of("Kismet", "Jennie"), Map.of("hops", 1, "maxNew", 1));
        assertEquals(List.of("Kismet", "Jennie", "Dieterle"), ids(row));
        assertEquals(List.of("Kismet", "Jennie"), ids(neighbourhood(List.of("Kismet", "Jennie"),
                Map.of("hops", 1, "maxNodes", 2))));
        assertEquals(List.of("Kismet"), ids(neighbourhood(List.of("Kismet", "Kismet"), Map.of("hops", 1, "maxNodes", 1))));
    }

    @Test
    void bigNeighbourhoodsArePrunedByPersonalizedPageRank() {
        List<Map<String, Object>> rows = neo4j.rows("CALL kgqa.frag.neighbourhood('test', ['Kismet'], $config) "
                + "YIELD nodes, expandable, edges, neighbourhood, pruned, ppr "
                + "RETURN [n IN nodes | n.id] AS ids, expandable, edges, neighbourhood, pruned, ppr",
                Map.of("config", Map.of("hops", 2, "maxDegree", 5, "keepNodes", 4, "damping", 0.8)));
        Map<String, Object> row = rows.get(0);
        assertEquals(6L, row.get("neighbourhood"));
        assertEquals(true, row.get("pruned"));
        // Kismet itself, then its three neighbours; the films two hops out are dropped
        assertEquals("Kismet", ids(row).get(0));
        assertEquals(Set.of("Kismet", "Dieterle", "Dietrich", "Drama"), new HashSet<>(ids(row)));
        @SuppressWarnings("unchecked")
        List<Double> ppr = (List<Double>) row.get("ppr");
        assertEquals(4, ppr.size());
        for (int i = 1; i < ppr.size(); i++) {
            assertTrue(ppr.get(i - 1) >= ppr.get(i), ppr.toString());
        }
        // only the edges between kept nodes, renumbered
        assertEquals(Set.of("Kismet|directed_by|Dieterle", "Kismet|starred_actors|Dietrich", "Kismet|has_genre|Drama"),
                edges(row));
        // small enough: untouched, no scores
        Map<String, Object> small = neo4j.rows("CALL kgqa.frag.neighbourhood('test', ['Kismet'], {hops: 1, keepNodes: 4}) "
                + "YIELD nodes, pruned, ppr RETURN size(nodes) AS n, pruned, ppr", Map.of()).get(0);
        assertEquals(4L, small.get("n"));
        assertEquals(false, small.get("pruned"));
        assertEquals(List.of(), small.get("ppr"));
    }

    @Test
    void validatesItsArguments() {
        assertContains(errorOf(List.of("Kismet"), Map.of("damping", 1.0)), "config.damping must be between 0.0 and 0.999");
        assertContains(errorOf(List.of("Kismet"), Map.of("keepNodes", -1)), "config.keepNodes must be between 0");
        assertContains(errorOf(List.of("Nobody"), Map.of()), "topicIds[0]: no entity with id 'Nobody' in KG 'test'");
        assertContains(errorOf(List.of(), Map.of()), "topicIds must be a non-empty list of entity ids");
        assertContains(errorOf(List.of(7L), Map.of()), "topicIds[0] must be a string");
        assertContains(errorOf(List.of("Kismet"), Map.of("hops", 0)), "config.hops must be between 1 and 6, got 0");
        assertContains(errorOf(List.of("Kismet"), Map.of("depth", 2)), "config has an unknown key 'depth'");
        assertContains(errorOf(List.of("Elsewhere"), Map.of()), "no entity with id 'Elsewhere' in KG 'test'");
        assertContains(errorOf(List.of("Kismet"), Map.of("maxNodes", 1_000_000_000_000L)),
                "config.maxNodes must be between 1 and 10000000, got 1000000000000");
        assertContains(errorOf(List.of("Kismet"), Map.of("damping", "high")),
                "config.damping must be a number, got the string 'high'");
    }

    @Test
    void namesTheKgArgumentWhenNoSuchKgIsLoaded() {
        // Before: the first topic id was blamed ("topicIds[0]: no entity with id 'Kismet' in KG 'nokg'").
        assertEquals("kg: no knowledge graph named 'nokg' is loaded (loaded: test)",
                errorOf("nokg", List.of("Kismet")));
        assertEquals("kg must be the name of a loaded KG, got null", errorOf(null, List.of("Kismet")));
        assertEquals("kg must be the name of a loaded KG, got an empty string", errorOf("", List.of("Kismet")));
    }

    private String errorOf(String kg, List<?> ids) {
        Map<String, Object> parameters = new HashMap<>(); // allows null values, unlike Map.of
        parameters.put("kg", kg);
        parameters.put("ids", ids);
        return assertThrows(QueryExecutionException.class,
                () -> neo4j.rows("CALL kgqa.frag.neighbourhood($kg, $ids)", parameters)).getMessage();
    }

    private String errorOf(List<?> ids, Map<String, Object> config) {
        return assertThrows(QueryExecutionException.class, () -> neighbourhood(new ArrayList<>(ids), config)).getMessage();
    }

    private static void assertContains(String actual, String expected) {
        assertTrue(actual.contains(expected), "expected '" + expected + "' in: " + actual);
    }
}
