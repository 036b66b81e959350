package io.kgqa.procedures.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import io.kgqa.procedures.TestModels;
import io.kgqa.procedures.gsr.GsrProcedures;
import io.kgqa.procedures.linking.LinkingProcedures;
import io.kgqa.procedures.subgraphrag.SubgraphRagProcedures;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * The shared limits are the ones the procedures apply by default: {@link Limits#LINKED_ENTITIES} entities linked
 * from a question, {@link Limits#ROW_CAP} rows per question (SubgraphRAG's candidates, GSR's paths per chain),
 * and the procedures' descriptions state them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LimitsTest {

    private InProcessNeo4j neo4j;
    private TestModels models;

    @BeforeAll
    void start() throws Exception {
        models = TestModels.empty("kgqa-limits").copy("gsr/tiny", "gsr/tiny")
                .copy("encoder/tiny-encoder", "encoder/all-MiniLM-L6-v2");
        neo4j = InProcessNeo4j.builder()
                .withProcedure(LinkingProcedures.class)
                .withProcedure(SubgraphRagProcedures.class)
                .withProcedure(GsrProcedures.class)
                .build()
                .withEntitySchema();
        // A hub one relationship more than the cap: a question about it pulls more rows than it may.
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'star', status: 'complete', loaded_at: datetime('2024-01-02T00:00:00Z')})
                CREATE (hub:Entity {kg: 'star', id: 'Hub', name: 'Hub'})
                WITH hub
                UNWIND range(1, $leaves) AS i
                CREATE (hub)-[:directed_by]->(:Entity {kg: 'star', id: 'Leaf' + i, name: 'Leaf ' + i})
                """, Map.of("leaves", Limits.ROW_CAP + 1));
        neo4j.database().executeTransactionally("CALL db.awaitIndexes(60)");
    }

    @AfterAll
    void stop() throws Exception {
        if (neo4j != null) {
            neo4j.close();
        }
        models.close();
    }

    private long count(String query) {
        return (long) neo4j.single(query, Map.of());
    }

    @Test
    void aQuestionLinksAtMostTheSharedNumberOfEntities() {
        String five = "[Leaf 1] [Leaf 2] [Leaf 3] [Leaf 4] [Leaf 5]";
        assertEquals(Limits.LINKED_ENTITIES,
                count("CALL kgqa.link.entities('" + five + "', {kg: 'star'}) YIELD id RETURN count(*)"));
        assertEquals(5, count("CALL kgqa.link.entities('" + five + "', {kg: 'star', maxEntities: 5}) YIELD id"
                + " RETURN count(*)"));
        QueryExecutionException tooMany = assertThrows(QueryExecutionException.class, () -> count(
                "CALL kgqa.link.entities('x', {kg: 'star', maxEntities: " + (Limits.MAX_LINKED_ENTITIES + 1) + "})"
                        + " YIELD id RETURN count(*)"));
        assertTrue(tooMany.getMessage().contains("config.maxEntities must be between 1 and "
                + Limits.MAX_LINKED_ENTITIES), tooMany.getMessage());
    }

    @Test
    void subgraphRagCandidatesStopAtTheRowCap() {
        assertEquals(Limits.ROW_CAP,
                count("CALL kgqa.subgraphrag.candidates('star', ['Hub'], {hops: 1}) YIELD head RETURN count(*)"));
        assertEquals(Limits.ROW_CAP + 1, count("CALL kgqa.subgraphrag.candidates('star', ['Hub'],"
                + " {hops: 1, maxCandidates: " + (Limits.ROW_CAP + 1) + "}) YIELD head RETURN count(*)"));
    }

    @Test
    void gsrPathsPerChainStopAtTheRowCap() {
        // the tiny model's best chain is directed_by, out: every leaf, one more than the cap
        List<Map<String, Object>> rows = neo4j.rows("CALL kgqa.gsr.retrieve('who directed [Hub]', {kg: 'star',"
                + " model: 'tiny', keep: 1}) YIELD chainRank, truncated RETURN chainRank, truncated", Map.of());
        assertEquals(Limits.ROW_CAP, rows.size());
        assertTrue(rows.stream().allMatch(r -> r.get("chainRank").equals(1L) && r.get("truncated").equals(true)));
    }

    @Test
    void theDescriptionsStateTheSharedLimits() {
        Map<String, String> descriptions = new java.util.HashMap<>();
        for (Map<String, Object> row : neo4j.rows("SHOW PROCEDURES YIELD name, description"
                + " WHERE name STARTS WITH 'kgqa.' RETURN name, description", Map.of())) {
            descriptions.put((String) row.get("name"), (String) row.get("description"));
        }
        assertTrue(descriptions.get("kgqa.link.entities").contains("maxEntities (default " + Limits.LINKED_ENTITIES
                + ", between 1 and " + Limits.MAX_LINKED_ENTITIES));
        assertTrue(descriptions.get("kgqa.subgraphrag.retrieve").contains("at most " + Limits.LINKED_ENTITIES));
        for (String name : List.of("kgqa.subgraphrag.candidates", "kgqa.subgraphrag.cosine", "kgqa.gsr.retrieve")) {
            assertTrue(descriptions.get(name).contains("default " + Limits.ROW_CAP), name);
        }
        assertTrue(descriptions.get("kgqa.subgraphrag.retrieve").contains(", " + Limits.ROW_CAP + ", true"));
    }
}
