package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kgqa.procedures.InProcessNeo4j;
import io.kgqa.procedures.TestModels;
import io.kgqa.procedures.frag.FragProcedures;
import io.kgqa.procedures.gsr.GsrProcedures;
import io.kgqa.procedures.simgrag.SimGragProcedures;
import io.kgqa.procedures.subgraphrag.SubgraphRagProcedures;
import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Limits;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.graphdb.Transaction;

/**
 * The one resolver of topic entities: what it finds, and that finding none is the same one-line error in every
 * namespace that starts from topic entities (SubgraphRAG, GSR, SimGRAG from a question; FRAG and SubgraphRAG's
 * candidates and cosine from topicIds).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TopicEntitiesTest {

    private static final String NOTHING = "who directed zzzz";
    /** Four entities, each in brackets: found by exact name, one more than Limits.LINKED_ENTITIES. */
    private static final String FOUR = "[Kismet] [The Fall] [Tarsem Singh] [William Dieterle]";

    private InProcessNeo4j neo4j;
    private TestModels models;

    @BeforeAll
    void start() throws Exception {
        models = TestModels.empty("kgqa-topic-entities").copy("subgraphrag/tiny", "subgraphrag/tiny")
                .copy("gsr/tiny", "gsr/tiny").copy("encoder/tiny-encoder", "encoder/tiny-encoder")
                .copy("encoder/tiny-encoder", "encoder/all-MiniLM-L6-v2");
        neo4j = InProcessNeo4j.builder()
                .withProcedure(LinkingProcedures.class)
                .withProcedure(SubgraphRagProcedures.class)
                .withProcedure(GsrProcedures.class)
                .withProcedure(SimGragProcedures.class)
                .withProcedure(FragProcedures.class)
                .build()
                .withEntitySchema();
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'test', status: 'complete', loaded_at: datetime('2024-01-02T00:00:00Z')})
                CREATE (k:Entity {kg: 'test', id: 'Kismet', name: 'Kismet'})
                CREATE (d:Entity {kg: 'test', id: 'Dieterle', name: 'William Dieterle'})
                CREATE (f:Entity {kg: 'test', id: 'The Fall', name: 'The Fall'})
                CREATE (t:Entity {kg: 'test', id: 'Tarsem', name: 'Tarsem Singh'})
                CREATE (h1:Entity {kg: 'test', id: 'Heat (1995)', name: 'Heat'})
                CREATE (h2:Entity {kg: 'test', id: 'Heat (1986)', name: 'Heat'})
                CREATE (k)-[:directed_by]->(d), (f)-[:directed_by]->(t)
                CREATE (:Relation {kg: 'test', name: 'directed_by'})
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

    private <T> T inTx(Function<Transaction, T> work) {
        try (Transaction tx = neo4j.database().beginTx()) {
            return work.apply(tx);
        }
    }

    /** What a resolution found, read inside its transaction: entity ids, each one's span, and the spans. */
    private record Found(List<String> ids, List<String> entitySpans, List<String> spans) {
    }

    private Found resolve(String question, List<String> given, List<String> spans) {
        return inTx(tx -> {
            TopicEntities.Topics topics = TopicEntities.resolve(tx, "test", null, question, given, spans);
            return new Found(topics.nodes().stream().map(n -> (String) n.getProperty("id")).toList(),
                    topics.entities().stream().map(TopicEntities.Topic::span).toList(), topics.spans());
        });
    }

    private String refusal(Runnable call) {
        return assertThrows(BadArgumentException.class, call::run).text();
    }

    /** The message Cypher reports for {@code query}, which must fail. */
    private String cypherError(String query, Map<String, Object> parameters) {
        QueryExecutionException e = assertThrows(QueryExecutionException.class, () -> neo4j.rows(query, parameters));
        Throwable root = e;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        return root instanceof BadArgumentException bad ? bad.text() : root.getMessage();
    }

    // ------------------------------------------------------------------------------------------ what it finds

    @Test
    void linksTheQuestionAsKgqaLinkEntitiesDoesAtMostTheSharedLimit() {
        Found topics = resolve(FOUR, null, null);
        assertEquals(Limits.LINKED_ENTITIES, topics.ids().size());
        assertEquals(List.of("Kismet", "The Fall", "Tarsem"), topics.ids());
        assertEquals(List.of("Kismet", "The Fall", "Tarsem Singh"), topics.spans());
        assertEquals(topics.spans(), topics.entitySpans());
        List<Object> linked = neo4j.rows("CALL kgqa.link.entities($q, {kg: 'test'}) YIELD id RETURN id",
                Map.of("q", FOUR)).stream().map(r -> r.get("id")).toList();
        assertEquals(topics.ids(), linked);
        // config.topicSpans names the words to mask instead of the linked ones
        assertEquals(List.of("the film"), resolve("who directed [Kismet]", null, List.of("the film")).spans());
    }

    @Test
    void givenNamesOrIdsResolveEachToItsEntitiesWithItsOwnSpan() {
        Found byName = resolve("q", List.of("kismet", "Tarsem"), null);
        assertEquals(List.of("Kismet", "Tarsem"), byName.ids());
        assertEquals(List.of("kismet", "Tarsem"), byName.spans());
        // a name two entities share gives both, each with the span of the name that found it
        Found shared = resolve("heat and kismet", List.of("Heat", "Kismet"), List.of("heat", "kismet"));
        assertEquals(Set.of("Heat (1995)", "Heat (1986)"), Set.copyOf(shared.ids().subList(0, 2)));
        assertEquals("Kismet", shared.ids().get(2));
        assertEquals(List.of("heat", "heat", "kismet"), shared.entitySpans());
        assertEquals(List.of("heat", "kismet"), shared.spans());
        // an entity named twice counts once
        assertEquals(List.of("Kismet"), resolve("q", List.of("Kismet", "kismet"), null).ids());
    }

    @Test
    void byIdsTakesExactIdsInOrder() {
        assertEquals(List.of("The Fall", "Kismet"), inTx(tx -> TopicEntities.byIds(tx, "test",
                List.of("The Fall", "Kismet")).stream().map(n -> n.getProperty("id")).toList()));
    }

    // ------------------------------------------------------------------------------- finding none: one error

    @Test
    void nothingFoundIsOneErrorNamingTheQuestionAndTheWayOut() {
        String expected = "question: no topic entity of KG 'test' found in 'who directed zzzz'; mark it with"
                + " [brackets] or pass config.topicEntities";
        assertEquals(expected, TopicEntities.nothingFound("test", NOTHING).text());
        assertEquals(expected, refusal(() -> resolve(NOTHING, null, null)));
        // a bracket that names nothing is linked as free text, and finds nothing either
        assertEquals(TopicEntities.nothingFound("test", "who directed [Nobody At All]").text(),
                refusal(() -> resolve("who directed [Nobody At All]", null, null)));
        // topicSpans do not stand in for entities
        assertEquals(expected, refusal(() -> resolve(NOTHING, null, List.of("zzzz"))));
    }

    @Test
    void givenNamesThatFindNothingAreRefusedNamingTheName() {
        assertEquals("config.topicEntities must not be empty (omit it to link the question)",
                refusal(() -> resolve("q", List.of(), null)));
        assertEquals("config.topicEntities[1]: no entity with id or name 'Nobody' in KG 'test'",
                refusal(() -> resolve("q", List.of("Kismet", "Nobody"), null)));
        assertEquals("config.topicSpans must have one span per topic entity (1), got 2",
                refusal(() -> resolve("q", List.of("Kismet"), List.of("a", "b"))));
    }

    @Test
    void idsThatFindNothingAreRefusedNamingTheId() {
        assertEquals("topicIds must be a non-empty list of entity ids, got an empty list",
                refusal(() -> inTx(tx -> TopicEntities.byIds(tx, "test", List.of()))));
        assertEquals("topicIds must be a non-empty list of entity ids, got null",
                refusal(() -> inTx(tx -> TopicEntities.byIds(tx, "test", null))));
        assertEquals("topicIds[0] must be a string, got the number 5",
                refusal(() -> inTx(tx -> TopicEntities.byIds(tx, "test", List.of(5)))));
        // ids are exact: a name is not an id
        assertEquals("topicIds[1]: no entity with id 'William Dieterle' in KG 'test'",
                refusal(() -> inTx(tx -> TopicEntities.byIds(tx, "test", List.of("Kismet", "William Dieterle")))));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "CALL kgqa.subgraphrag.retrieve($q, $config)",
        "CALL kgqa.subgraphrag.walks($q, $config)",
        "CALL kgqa.gsr.retrieve($q, $config)",
        "CALL kgqa.gsr.chains($q, $config)",
        "CALL kgqa.simgrag.pattern($q, $config)",
        "CALL kgqa.simgrag.retrieve($q, $config)"})
    void everyNamespaceRefusesAQuestionWithoutATopicEntityTheSameWay(String query) {
        Map<String, Object> config = new HashMap<>(Map.of("kg", "test"));
        if (!query.contains("simgrag")) {
            config.put("model", "tiny");
        }
        assertEquals(TopicEntities.nothingFound("test", NOTHING).text(),
                cypherError(query, Map.of("q", NOTHING, "config", config)));
        config.put("topicEntities", List.of("Nobody"));
        assertEquals("config.topicEntities[0]: no entity with id or name 'Nobody' in KG 'test'",
                cypherError(query, Map.of("q", "who directed it", "config", config)));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "CALL kgqa.frag.neighbourhood('test', $ids, {})",
        "CALL kgqa.subgraphrag.candidates('test', $ids, {})",
        "CALL kgqa.subgraphrag.cosine('test', $ids, {questionEmbedding: [0.1, 0.2, 0.3, 0.4]})"})
    void everyNamespaceRefusesTopicIdsThatFindNothingTheSameWay(String query) {
        assertEquals("topicIds must be a non-empty list of entity ids, got an empty list",
                cypherError(query, Map.of("ids", List.of())));
        assertEquals("topicIds[0]: no entity with id 'Nobody' in KG 'test'",
                cypherError(query, Map.of("ids", List.of("Nobody"))));
    }
}
