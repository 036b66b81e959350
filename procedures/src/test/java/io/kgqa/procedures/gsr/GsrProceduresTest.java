package io.kgqa.procedures.gsr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import io.kgqa.procedures.TestModels;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * kgqa.gsr.chains and kgqa.gsr.retrieve through Cypher, with the tiny GSR model (its chains do not depend on
 * the question, and are, best first: directed_by>, starred_actors<, [directed_by>, directed_by<,
 * starred_actors>], starred_actors>, [starred_actors<, directed_by>], [directed_by>, directed_by<], …).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GsrProceduresTest {

    private InProcessNeo4j neo4j;
    private TestModels models;

    @BeforeAll
    void start() throws Exception {
        models = TestModels.empty("kgqa-gsr-procedures").copy("gsr/tiny", "gsr/tiny")
                .copy("encoder/tiny-encoder", "encoder/all-MiniLM-L6-v2");
        neo4j = InProcessNeo4j.builder().withProcedure(GsrProcedures.class).build().withEntitySchema();
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'test', status: 'complete', loaded_at: datetime('2024-01-02T00:00:00Z')})
                CREATE (k:Entity {kg: 'test', id: 'Kismet', name: 'Kismet'})
                CREATE (p:Entity {kg: 'test', id: 'Jennie', name: 'Portrait of Jennie'})
                CREATE (d:Entity {kg: 'test', id: 'Dieterle', name: 'William Dieterle'})
                CREATE (m:Entity {kg: 'test', id: 'Dietrich', name: 'Marlene Dietrich'})
                CREATE (j:Entity {kg: 'test', id: 'Jones', name: 'Jennifer Jones'})
                CREATE (k)-[:directed_by]->(d), (p)-[:directed_by]->(d), (k)-[:starred_actors]->(m),
                       (p)-[:starred_actors]->(j)
                """);
        neo4j.database().executeTransactionally("CALL db.awaitIndexes(60)");
    }

    @AfterAll
    void stop() throws Exception {
        if (neo4j != null) {
            neo4j.close();
        }
        models.close();
    }

    private List<Map<String, Object>> call(String procedure, String question, Map<String, Object> config) {
        Map<String, Object> parameters = new HashMap<>();
        parameters.put("question", question);
        parameters.put("config", config);
        return neo4j.database().executeTransactionally("CALL kgqa.gsr." + procedure + "($question, $config)",
                parameters, r -> r.stream().toList());
    }

    private String error(String procedure, String question, Map<String, Object> config) {
        QueryExecutionException e = assertThrows(QueryExecutionException.class, () -> call(procedure, question, config));
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root.getMessage();
    }

    @Test
    void chainsStreamBestFirstWithTheMaskedQuestion() {
        List<Map<String, Object>> rows = call("chains", "Who directed [Kismet]", Map.of("model", "tiny", "beams", 4));
        assertEquals(4, rows.size());
        assertEquals(1L, rows.get(0).get("rank"));
        assertEquals(List.of(List.of("directed_by", "out")), rows.get(0).get("chain"));
        assertEquals("who directed [MASK]", rows.get(0).get("maskedQuestion"));
        assertTrue((double) rows.get(0).get("score") >= (double) rows.get(3).get("score"));
        // linked words are masked too
        assertEquals("who directed [MASK]", call("chains", "who directed kismet", Map.of("model", "tiny", "kg", "test"))
                .get(0).get("maskedQuestion"));
    }

    @Test
    void retrieveWalksTheFirstChainsThatReachSomethingNeverBackToTheTopic() {
        List<Map<String, Object>> rows = call("retrieve", "who directed [Kismet]", Map.of("model", "tiny", "kg", "test"));
        // chain 2 (starred_actors<) reaches nothing from Kismet and is skipped; keep = 3 chains
        assertEquals(List.of(1L, 3L, 4L), rows.stream().map(r -> r.get("chainRank")).toList());
        assertEquals("William Dieterle", rows.get(0).get("answer"));
        assertEquals(List.of(List.of("Kismet", "directed_by", "William Dieterle")), rows.get(0).get("triplets"));
        assertEquals(List.of(List.of("Kismet", "directed_by", "William Dieterle"),
                List.of("Portrait of Jennie", "directed_by", "William Dieterle"),
                List.of("Portrait of Jennie", "starred_actors", "Jennifer Jones")), rows.get(1).get("triplets"));
        assertEquals("Marlene Dietrich", rows.get(2).get("answer"));
        assertEquals("Kismet", rows.get(0).get("topicId"));

        // [directed_by>, directed_by<] from Kismet: the other film only, never Kismet itself
        List<Map<String, Object>> all = call("retrieve", "who directed [Kismet]", Map.of("model", "tiny", "keep", 10));
        List<Object> coFilms = all.stream()
                .filter(r -> r.get("chain").equals(List.of(List.of("directed_by", "out"), List.of("directed_by", "in"))))
                .map(r -> r.get("answer")).toList();
        assertEquals(List.of("Portrait of Jennie"), coFilms);

        assertEquals(1, call("retrieve", "who directed [Kismet]", Map.of("model", "tiny", "keep", 1)).size());
        // allChains: the chains that were not walked or reached nothing come as rows without a path
        List<Map<String, Object>> every = call("retrieve", "who directed [Kismet]",
                Map.of("model", "tiny", "keep", 1, "beams", 5, "allChains", true));
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), every.stream().map(r -> r.get("chainRank")).toList());
        assertEquals(List.of(), every.get(1).get("triplets"));
        assertEquals(null, every.get(1).get("answer"));
        assertEquals(List.of("Kismet"), call("retrieve", "who directed it",
                Map.of("model", "tiny", "topicEntities", List.of("Kismet"), "keep", 1)).stream()
                .map(r -> r.get("topic")).toList());
    }

    @Test
    void aQuestionWithoutALinkedEntityIsRefusedAsEveryRetrieverRefusesIt() {
        String refused = "question: no topic entity of KG 'test' found in 'what is the meaning of life'; mark it"
                + " with [brackets] or pass config.topicEntities";
        assertEquals(refused, error("retrieve", "what is the meaning of life", Map.of("model", "tiny", "kg", "test")));
        // chains masks the linked words, so it needs them too; a bracket or topicSpans names them instead
        assertEquals(refused, error("chains", "what is the meaning of life", Map.of("model", "tiny", "kg", "test")));
        assertEquals(4, call("chains", "what is the meaning of life",
                Map.of("model", "tiny", "kg", "test", "topicSpans", List.of("life"), "beams", 4)).size());
    }

    @Test
    void badArgumentsGetOneLineErrorsNamingThem() {
        assertTrue(error("chains", "who directed [Kismet]", Map.of("model", "nope")).contains("config.model: no GSR model 'nope'"));
        assertTrue(error("retrieve", "who directed [Kismet]", Map.of("model", "nope")).contains("kgqa train gsr"));
        assertTrue(error("chains", "who directed [Kismet]", Map.of("model", "tiny", "beams", 0))
                .contains("config.beams must be between 1 and 100, got 0"));
        assertTrue(error("retrieve", "who directed [Kismet]", Map.of("model", "tiny", "beams", -2))
                .contains("config.beams"));
        assertTrue(error("chains", "who directed [Kismet]", Map.of("model", "tiny", "beams", "ten"))
                .contains("config.beams must be an integer"));
        assertTrue(error("retrieve", "who directed [Kismet]", Map.of("model", "tiny", "keep", 0)).contains("config.keep"));
        assertTrue(error("retrieve", "who directed [Kismet]", Map.of("model", "tiny", "maxPaths", -1))
                .contains("config.maxPaths"));
        assertTrue(error("retrieve", "who directed [Kismet]", Map.of("model", "tiny", "kg", "absent"))
                .contains("no knowledge graph named 'absent'"));
        assertTrue(error("chains", "who directed [Kismet]", Map.of("beam", 3)).contains("unknown key 'beam'"));
        assertTrue(error("chains", "", Map.of()).contains("question must be a non-empty string"));
        assertTrue(error("retrieve", null, Map.of()).contains("question must be a non-empty string"));
        assertTrue(error("retrieve", "who", Map.of("model", "tiny", "topicEntities", List.of("Nobody")))
                .contains("config.topicEntities[0]"));
        assertTrue(error("chains", "who directed [Kismet]", Map.of("model", "../x")).contains("config.model"));
        assertTrue(error("retrieve", "who directed [Kismet]", Map.of("model", "tiny", "maxPaths", 1_000_000_000_000L))
                .contains("config.maxPaths must be between 1 and 10000000, got 1000000000000"));
    }

    @Test
    void errorsReachCypherAsOneLineWithNoJavaClassName() {
        QueryExecutionException e = assertThrows(QueryExecutionException.class,
                () -> call("retrieve", "who directed [Kismet]", Map.of("model", "nope")));
        assertTrue(e.getMessage().startsWith("config.model: no GSR model 'nope' in "), e.getMessage());
        assertFalse(e.getMessage().contains("java.lang") || e.getMessage().contains("\n"), e.getMessage());
    }
}
