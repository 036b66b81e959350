package io.kgqa.procedures.paths;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * kgqa.paths.walkable through Cypher on an in-process Neo4j:
 *
 * <pre>
 *   Kismet -directed_by-> Dieterle <-directed_by- Jennie        (Dieterle leads on to Jennie: in, then out)
 *   Kismet -starred-> Dietrich                                  (Dietrich leads only back: no second step)
 *   Kismet -has_genre-> Drama <-has_genre- Film0 .. Film59      (Drama: a dense node, 61 relationships)
 *   Drama -similar-> Drama                                      (a loop: never a second step)
 *   Loop -self-> Loop                                           (a loop: never a first step)
 * </pre>
 *
 * and, against the Cypher walk it replaced, random graphs with hubs, loops and parallel relationships.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PathsProceduresTest {

    /** The Cypher walk of cypher_templates/paths/walkable.cypher.j2, its fanout unbounded. */
    private static final String CYPHER_WALK = """
            UNWIND $ids AS topic_id
            MATCH (n0:Entity {kg: $kg, id: topic_id})-[r1]-(n1)
            WHERE n1 <> n0
            WITH n0, type(r1) AS t1, CASE WHEN startNode(r1) = n0 THEN 'out' ELSE 'in' END AS w1, n1
            WITH n0, t1, w1, collect(DISTINCT n1) AS firsts
            CALL (n0, t1, w1, firsts) {
              RETURN [[t1, w1]] AS chain
              UNION ALL
              UNWIND firsts AS n1
              MATCH (n1)-[r2]-(n2)
              WHERE n2 <> n0 AND n2 <> n1
              RETURN DISTINCT [[t1, w1], [type(r2), CASE WHEN startNode(r2) = n1 THEN 'out' ELSE 'in' END]] AS chain
            }
            RETURN DISTINCT chain
            """;

    private InProcessNeo4j neo4j;

    @BeforeAll
    void start() {
        neo4j = InProcessNeo4j.builder().withProcedure(PathsProcedures.class).build();
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'test'})
                CREATE (k:Entity {kg: 'test', id: 'Kismet'})
                CREATE (d:Entity {kg: 'test', id: 'Dieterle'})
                CREATE (m:Entity {kg: 'test', id: 'Dietrich'})
                CREATE (j:Entity {kg: 'test', id: 'Jennie'})
                CREATE (drama:Entity {kg: 'test', id: 'Drama'})
                CREATE (loop:Entity {kg: 'test', id: 'Loop'})
                CREATE (k)-[:directed_by]->(d)
                CREATE (j)-[:directed_by]->(d)
                CREATE (k)-[:starred]->(m)
                CREATE (k)-[:has_genre]->(drama)
                CREATE (drama)-[:similar]->(drama)
                CREATE (loop)-[:self]->(loop)
                WITH drama
                UNWIND range(0, 59) AS i
                CREATE (:Entity {kg: 'test', id: 'Film' + i})-[:has_genre]->(drama)
                """);
    }

    @AfterAll
    void stop() {
        if (neo4j != null) {
            neo4j.close();
        }
    }

    @Test
    void listsEachWalkableChainOnceOneStepFirst() {
        List<List<List<String>>> chains = chains("test", List.of("Kismet"), Map.of());
        assertEquals(Set.of(
                List.of(List.of("directed_by", "out")),
                List.of(List.of("starred", "out")),
                List.of(List.of("has_genre", "out")),
                List.of(List.of("directed_by", "out"), List.of("directed_by", "in")),
                List.of(List.of("has_genre", "out"), List.of("has_genre", "in"))),
                new HashSet<>(chains));
        assertEquals(5, chains.size());
        assertEquals(List.of(1, 1, 1, 2, 2), chains.stream().map(List::size).toList());
        List<Object> keys = neo4j.rows("CALL kgqa.paths.walkable('test', ['Kismet']) YIELD key RETURN key", Map.of())
                .stream().map(row -> row.get("key")).toList();
        assertTrue(keys.contains("directed_by>|directed_by<"), keys.toString());
        assertTrue(keys.contains("starred>"), keys.toString());
    }

    @Test
    void aLoopIsNeverAStep() {
        assertEquals(List.of(), chains("test", List.of("Loop"), Map.of()));
    }

    @Test
    void manyTopicsGiveEachChainOnce() {
        List<List<List<String>>> both = chains("test", List.of("Kismet", "Jennie", "Kismet"), Map.of());
        assertEquals(new HashSet<>(both).size(), both.size());
        assertTrue(both.contains(List.of(List.of("directed_by", "out"), List.of("directed_by", "in"))));
        assertEquals(chains("test", List.of("Kismet"), Map.of()), both.subList(0, 5));
    }

    @Test
    void maxViaSamplesTheMiddlesOfAFirstStep() {
        // directed_by in reaches Kismet (which leads on) and Jennie (which leads only back)
        List<List<List<String>>> all = chains("test", List.of("Dieterle"), Map.of());
        assertTrue(all.contains(List.of(List.of("directed_by", "in"), List.of("starred", "out"))));
        List<List<List<String>>> one = chains("test", List.of("Dieterle"), Map.of("maxVia", 1));
        assertTrue(all.containsAll(one));
        assertTrue(one.contains(List.of(List.of("directed_by", "in"))));
    }

    @Test
    void fanoutBoundsTheRelationshipsReadOfAMiddle() {
        // Dieterle's one relationship that leads on (to Jennie, from Kismet) is read with a fanout of 1
        List<List<List<String>>> chains = chains("test", List.of("Kismet"), Map.of("fanout", 1));
        assertTrue(chains.contains(List.of(List.of("directed_by", "out"), List.of("directed_by", "in"))));
        // Drama's 60 films and its loop: one film is read, the loop never counts
        assertTrue(chains.contains(List.of(List.of("has_genre", "out"), List.of("has_genre", "in"))));
    }

    @Test
    void agreesWithTheCypherWalkOnRandomGraphs() {
        Random random = new Random(7);
        for (int graph = 0; graph < 5; graph++) {
            String kg = "random" + graph;
            int nodes = 30;
            List<Map<String, Object>> edges = new ArrayList<>();
            for (int e = 0; e < 140; e++) {
                // node 0 is a hub: a third of the relationships touch it; loops and parallels happen
                int from = random.nextInt(3) == 0 ? 0 : random.nextInt(nodes);
                int to = random.nextInt(nodes);
                edges.add(Map.of("from", "n" + from, "to", "n" + to, "type", "r" + random.nextInt(4)));
            }
            neo4j.database().executeTransactionally("""
                    CREATE (:KG {name: $kg})
                    WITH 1 AS one UNWIND range(0, $nodes - 1) AS i CREATE (:Entity {kg: $kg, id: 'n' + i})
                    """, Map.of("kg", kg, "nodes", nodes));
            for (int type = 0; type < 4; type++) {
                String r = "r" + type;  // one of four fixed test types: Cypher takes no type as a parameter
                List<Map<String, Object>> ofType = edges.stream().filter(e -> e.get("type").equals(r)).toList();
                neo4j.database().executeTransactionally("UNWIND $edges AS e MATCH (a:Entity {kg: $kg, id: e.from}),"
                        + " (b:Entity {kg: $kg, id: e.to}) CREATE (a)-[:" + r + "]->(b)",
                        Map.of("kg", kg, "edges", ofType));
            }
            for (int topic = 0; topic < 6; topic++) {
                List<String> ids = List.of("n" + topic);
                Set<Object> expected = new HashSet<>();
                for (Map<String, Object> row : neo4j.rows(CYPHER_WALK, Map.of("kg", kg, "ids", ids))) {
                    expected.add(row.get("chain"));
                }
                assertEquals(expected, new HashSet<>(chains(kg, ids, Map.of("maxVia", 1000, "fanout", 1000))),
                        kg + " from " + ids);
            }
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void endsSaysWhereEachChainLeadsInTheOrderGiven() {
        List<Map<String, Object>> rows = neo4j.rows("CALL kgqa.paths.ends('test', ['Kismet'], $chains, $config)"
                + " YIELD key, ends, paths RETURN key, ends, paths", Map.of("chains", List.of(
                "directed_by>|directed_by<", "has_genre>|has_genre<", "starred>|starred<", "no_such>"),
                "config", Map.of()));
        assertEquals(List.of("directed_by>|directed_by<", "has_genre>|has_genre<", "starred>|starred<", "no_such>"),
                rows.stream().map(r -> r.get("key")).toList());
        assertEquals(List.of("Jennie"), rows.get(0).get("ends"));
        assertEquals(60, ((List<String>) rows.get(1).get("ends")).size());  // never back to Kismet
        assertEquals(60L, rows.get(1).get("paths"));
        assertEquals(List.of(), rows.get(2).get("ends"));  // Dietrich leads only back
        assertEquals(0L, rows.get(3).get("paths"));
        Map<String, Object> capped = neo4j.rows("CALL kgqa.paths.ends('test', ['Kismet'], ['has_genre>|has_genre<'],"
                + " {maxPaths: 5}) YIELD ends, paths RETURN ends, paths", Map.of()).get(0);
        assertEquals(5L, capped.get("paths"));
        assertEquals(5, ((List<String>) capped.get("ends")).size());
    }

    @Test
    void endsAgreeWithTheCypherTemplateOnRandomGraphs() {
        Random random = new Random(11);
        String kg = "random-ends";
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: $kg})
                WITH 1 AS one UNWIND range(0, 24) AS i CREATE (:Entity {kg: $kg, id: 'n' + i, name: 'N' + (i % 20)})
                """, Map.of("kg", kg));
        for (int type = 0; type < 3; type++) {
            String r = "r" + type;  // one of three fixed test types: Cypher takes no type as a parameter
            List<Map<String, Object>> edges = new ArrayList<>();
            for (int e = 0; e < 40; e++) {
                edges.add(Map.of("from", "n" + random.nextInt(25), "to", "n" + random.nextInt(25)));
            }
            neo4j.database().executeTransactionally("UNWIND $edges AS e MATCH (a:Entity {kg: $kg, id: e.from}),"
                    + " (b:Entity {kg: $kg, id: e.to}) CREATE (a)-[:" + r + "]->(b)", Map.of("kg", kg, "edges", edges));
        }
        String[][] chains = {{"r0>|r1<", "(n0)-[:r0]->(n1)<-[:r1]-(n2)"}, {"r2<|r2>", "(n0)<-[:r2]-(n1)-[:r2]->(n2)"},
            {"r1>|r1>", "(n0)-[:r1]->(n1)-[:r1]->(n2)"}, {"r0<|r2<", "(n0)<-[:r0]-(n1)<-[:r2]-(n2)"}};
        for (String[] chain : chains) {
            for (int topic = 0; topic < 8; topic++) {
                List<String> ids = List.of("n" + topic, "n" + (topic + 10));
                Object expected = neo4j.rows("UNWIND $ids AS id MATCH (n0:Entity {kg: $kg, id: id}) MATCH " + chain[1]
                        + " WHERE n1 <> n0 AND n2 <> n0 RETURN count(*) AS paths, collect(DISTINCT n2.name) AS ends",
                        Map.of("kg", kg, "ids", ids)).get(0);
                Map<String, Object> got = neo4j.rows("CALL kgqa.paths.ends($kg, $ids, [$chain]) YIELD ends, paths"
                        + " RETURN ends, paths", Map.of("kg", kg, "ids", ids, "chain", chain[0])).get(0);
                Map<String, Object> want = (Map<String, Object>) expected;
                assertEquals(want.get("paths"), got.get("paths"), chain[0] + " from " + ids);
                assertEquals(new HashSet<>((List<?>) want.get("ends")), new HashSet<>((List<?>) got.get("ends")),
                        chain[0] + " from " + ids);
            }
        }
    }

    @Test
    void badArgumentsAreNamed() {
        assertContains(errorOf("test", List.of("Nobody"), Map.of()), "no entity with id 'Nobody' in KG 'test'");
        assertContains(errorOf("test", List.of(), Map.of()), "topicIds must be a non-empty list");
        assertContains(errorOf("nokg", List.of("Kismet"), Map.of()), "nokg");
        assertContains(errorOf("test", List.of("Kismet"), Map.of("maxVia", 0)), "maxVia");
        assertContains(errorOf("test", List.of("Kismet"), Map.of("fanout", -1)), "fanout");
        assertContains(errorOf("test", List.of("Kismet"), Map.of("maxvia", 3)), "unknown key 'maxvia'");
        assertContains(endsError(List.of("directed_by")),
                "chains[0] 'directed_by': 'directed_by' is not a relation");
        assertContains(endsError(List.of("a>||b<")), "'' is not a relation followed by > or <");
        assertContains(endsError(java.util.Arrays.asList("a>", null)), "chains[1] must be a chain key");
    }

    @SuppressWarnings("unchecked")
    private List<List<List<String>>> chains(String kg, List<String> ids, Map<String, Object> config) {
        List<List<List<String>>> out = new ArrayList<>();
        for (Map<String, Object> row : neo4j.rows("CALL kgqa.paths.walkable($kg, $ids, $config) YIELD chain"
                + " RETURN chain", Map.of("kg", kg, "ids", ids, "config", config))) {
            out.add((List<List<String>>) row.get("chain"));
        }
        return out;
    }

    private String endsError(List<String> chains) {
        Map<String, Object> parameters = new java.util.HashMap<>();
        parameters.put("chains", chains);
        return assertThrows(QueryExecutionException.class, () -> neo4j.rows(
                "CALL kgqa.paths.ends('test', ['Kismet'], $chains)", parameters)).getMessage();
    }

    private String errorOf(String kg, List<String> ids, Map<String, Object> config) {
        return assertThrows(QueryExecutionException.class, () -> chains(kg, ids, config)).getMessage();
    }

    private static void assertContains(String actual, String expected) {
        assertTrue(actual.contains(expected), "expected '" + expected + "' in: " + actual);
    }
}
