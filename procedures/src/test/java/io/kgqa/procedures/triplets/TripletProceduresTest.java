package io.kgqa.procedures.triplets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.QueryExecutionException;

/** kgqa.triplets.* called through Cypher on an in-process Neo4j. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TripletProceduresTest {

    private static final String DEDUP_ORDER = "CALL kgqa.triplets.dedupOrder($triplets, $topics) "
            + "YIELD head, relation, tail, distance, position "
            + "RETURN head, relation, tail, distance, position";

    private InProcessNeo4j neo4j;

    @BeforeAll
    void startNeo4j() {
        // Pure functions of their arguments: no graph data, so the shared instance is enough.
        neo4j = InProcessNeo4j.shared(TripletProcedures.class);
    }

    private List<Map<String, Object>> dedupOrder(Object triplets, Object topics) {
        Map<String, Object> parameters = new HashMap<>(); // allows null values, unlike Map.of
        parameters.put("triplets", triplets);
        parameters.put("topics", topics);
        return neo4j.rows(DEDUP_ORDER, parameters);
    }

    private static List<String> lines(List<Map<String, Object>> rows) {
        return rows.stream().map(r -> r.get("head") + "|" + r.get("relation") + "|" + r.get("tail")).toList();
    }

    private static List<Object> column(List<Map<String, Object>> rows, String name) {
        return rows.stream().map(r -> r.get(name)).toList();
    }

    private String errorOf(Object triplets, Object topics) {
        QueryExecutionException error = assertThrows(QueryExecutionException.class, () -> dedupOrder(triplets, topics));
        return error.getMessage();
    }

    @Test
    void removesDuplicatesAndOrdersByDistanceWithStableTies() {
        List<List<String>> input = List.of(
                List.of("Lee Pace", "starred_in", "The Fall"),      // 0
                List.of("The Fall", "directed_by", "Tarsem Singh"),  // 1
                List.of("Pushing Daisies", "starred_actors", "Lee Pace"),
                List.of("Lee Pace", "starred_in", "The Fall"),       // duplicate of the first row
                List.of("Tarsem Singh", "born_in", "Jalandhar"),     // 2 hops out
                List.of("Lee Pace", "starred_in", "Halt and Catch Fire"));
        List<Map<String, Object>> rows = dedupOrder(input, List.of("Lee Pace"));
        assertEquals(List.of(
                "Lee Pace|starred_in|The Fall",
                "Pushing Daisies|starred_actors|Lee Pace",
                "Lee Pace|starred_in|Halt and Catch Fire",
                "The Fall|directed_by|Tarsem Singh",
                "Tarsem Singh|born_in|Jalandhar"), lines(rows));
        assertEquals(List.of(0L, 0L, 0L, 1L, 2L), column(rows, "distance"));
        assertEquals(List.of(0L, 1L, 2L, 3L, 4L), column(rows, "position"));
    }

    @Test
    void handlesCycles() {
        List<List<String>> input = List.of(
                List.of("C", "r", "A"), List.of("B", "r", "C"), List.of("A", "r", "B"), List.of("C", "r", "D"));
        List<Map<String, Object>> rows = dedupOrder(input, List.of("A"));
        assertEquals(List.of("C|r|A", "A|r|B", "B|r|C", "C|r|D"), lines(rows));
        assertEquals(List.of(0L, 0L, 1L, 1L), column(rows, "distance"));
    }

    @Test
    void unknownTopicEntitiesLeaveInputOrderWithNullDistance() {
        List<List<String>> input = List.of(List.of("C", "r", "D"), List.of("A", "r", "B"), List.of("C", "r", "D"));
        for (List<String> topics : List.of(List.of("nobody"), List.<String>of())) {
            List<Map<String, Object>> rows = dedupOrder(input, topics);
            assertEquals(List.of("C|r|D", "A|r|B"), lines(rows));
            assertEquals(Arrays.asList(null, null), column(rows, "distance"));
            assertEquals(List.of(0L, 1L), column(rows, "position"));
        }
    }

    @Test
    void disconnectedTripletsComeLast() {
        List<List<String>> input = List.of(List.of("X", "r", "Y"), List.of("A", "r", "B"));
        List<Map<String, Object>> rows = dedupOrder(input, List.of("A"));
        assertEquals(List.of("A|r|B", "X|r|Y"), lines(rows));
        assertEquals(0L, rows.get(0).get("distance"));
        assertNull(rows.get(1).get("distance"));
    }

    @Test
    void acceptsMapsAsWellAsLists() {
        List<Object> input = List.of(
                Map.of("head", "B", "relation", "r", "tail", "C"),
                List.of("A", "r", "B"),
                Map.of("head", "A", "relation", "r", "tail", "B"));  // same fact as the list: a duplicate
        assertEquals(List.of("A|r|B", "B|r|C"), lines(dedupOrder(input, List.of("A"))));
    }

    @Test
    void emptyInputYieldsNoRows() {
        assertTrue(dedupOrder(List.of(), List.of("A")).isEmpty());
        assertTrue(dedupOrder(List.of(), List.of()).isEmpty());
    }

    @Test
    void rejectsBadTripletsNamingTheArgumentAndIndex() {
        assertTrue(errorOf(null, List.of()).contains("triplets must be a list"), "null list");
        assertTrue(errorOf(List.of(List.of("A", "r", "B"), List.of("A", "r")), List.of())
                .contains("triplets[1] must have exactly 3 elements"), "short entry");
        assertTrue(errorOf(List.of(List.of("A", "r", "B", "C")), List.of())
                .contains("triplets[0] must have exactly 3 elements [head, relation, tail], got 4"), "long entry");
        assertTrue(errorOf(List.of(List.of("A", "r", "B"), Arrays.asList("A", null, "B")), List.of())
                .contains("triplets[1][1] (relation) must be a string, got null"), "null element");
        assertTrue(errorOf(List.of(List.of("A", "r", 7L)), List.of())
                .contains("triplets[0][2] (tail) must be a string, got a number (7)"), "number element");
        assertTrue(errorOf(Arrays.asList(List.of("A", "r", "B"), null), List.of())
                .contains("triplets[1] must be a list [head, relation, tail] or a map {head, relation, tail}, got null"),
                "null entry");
        assertTrue(errorOf(List.of("A|r|B"), List.of())
                .contains("triplets[0] must be a list [head, relation, tail] or a map {head, relation, tail}, got a string"),
                "string entry");
        assertTrue(errorOf(List.of(Map.of("head", "A", "tail", "B")), List.of())
                .contains("triplets[0] must have the keys head, relation and tail; missing 'relation'"), "map entry");
    }

    @Test
    void errorsReachCypherAsTheirMessageAloneWithNoJavaClassName() {
        // Neo4j prefixes an exception without a status with "Failed to invoke procedure `…`: Caused by:
        // java.lang.IllegalArgumentException: "; BadArgumentException carries one, so the caller reads one line.
        assertEquals("topicEntities must be a list of entity names (use [] for none), got null",
                errorOf(List.of(), null));
        QueryExecutionException function = assertThrows(QueryExecutionException.class,
                () -> neo4j.single("RETURN kgqa.triplets.format(null) AS text", Map.of()));
        assertEquals("triplets must be a list of [head, relation, tail] string lists, got null", function.getMessage());
    }

    @Test
    void rejectsBadTopicEntitiesNamingTheArgument() {
        List<List<String>> input = List.of(List.of("A", "r", "B"));
        assertTrue(errorOf(input, null).contains("topicEntities must be a list of entity names (use [] for none), got null"));
        assertTrue(errorOf(input, Arrays.asList("A", null)).contains("topicEntities[1] must be a string, got null"));
        assertTrue(errorOf(input, List.of("A", 42L)).contains("topicEntities[1] must be a string, got a number (42)"));
    }

    @Test
    void orders100kTripletsCorrectly() {
        // A chain e0 - e1 - ... - e100000 given farthest-first, plus 5,000 duplicates and a
        // 1,000-triplet island; the topic entity is the chain's start.
        int chain = 100_000;
        List<List<String>> input = new ArrayList<>(chain + 6_000);
        for (int i = chain - 1; i >= 0; i--) {
            input.add(List.of("e" + i, i % 2 == 0 ? "next" : "prev", "e" + (i + 1)));
        }
        for (int i = 0; i < 1_000; i++) {
            input.add(List.of("island" + i, "near", "island" + (i + 1)));
        }
        for (int i = 0; i < 5_000; i++) {
            input.add(input.get(i * 7));
        }
        List<Map<String, Object>> rows = dedupOrder(input, List.of("e0", "not-in-the-input"));

        assertEquals(chain + 1_000, rows.size());
        for (int i : new int[] {0, 1, 2, 12_345, 50_000, chain - 1}) {
            Map<String, Object> row = rows.get(i);
            assertEquals("e" + i, row.get("head"), "row " + i);
            assertEquals("e" + (i + 1), row.get("tail"), "row " + i);
            assertEquals((long) i, row.get("distance"), "row " + i);
            assertEquals((long) i, row.get("position"), "row " + i);
        }
        Map<String, Object> firstIsland = rows.get(chain);
        assertEquals("island0", firstIsland.get("head"));
        assertNull(firstIsland.get("distance"));
        assertEquals("island999", rows.get(rows.size() - 1).get("head"));
        assertEquals((long) (chain + 999), rows.get(rows.size() - 1).get("position"));
    }

    @Test
    void formatWritesOneLinePerTriplet() {
        Object text = neo4j.single("RETURN kgqa.triplets.format($triplets) AS text",
                Map.of("triplets", List.of(List.of("A", "r", "B"), Map.of("head", "B", "relation", "s", "tail", "C"))));
        assertEquals("A|r|B\nB|s|C", text);
        assertEquals("", neo4j.single("RETURN kgqa.triplets.format([]) AS text", Map.of()));
    }

    @Test
    void formatRejectsMalformedTriplets() {
        QueryExecutionException error = assertThrows(QueryExecutionException.class,
                () -> neo4j.single("RETURN kgqa.triplets.format([['A', 'r']]) AS text", Map.of()));
        assertTrue(error.getMessage().contains("triplets[0] must have exactly 3 elements"), error.getMessage());
    }

    @Test
    void composesWithCypher() {
        // The intended use from Cypher: dedup/order, then format in prompt order.
        Object text = neo4j.single(
                "CALL kgqa.triplets.dedupOrder($triplets, ['A']) YIELD head, relation, tail "
                        + "RETURN kgqa.triplets.format(collect([head, relation, tail])) AS text",
                Map.of("triplets", List.of(List.of("B", "r", "C"), List.of("A", "r", "B"), List.of("B", "r", "C"))));
        assertEquals("A|r|B\nB|r|C", text);
    }
}
