package io.kgqa.procedures.subgraphrag;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import io.kgqa.procedures.TestModels;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.text.TextFunctions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * kgqa.subgraphrag.* and kgqa.text.embed through Cypher on an in-process Neo4j holding a tiny KG:
 *
 * <pre>
 *   Kismet -directed_by-> William Dieterle <-directed_by- Portrait of Jennie
 *   Kismet -starred_actors-> Marlene Dietrich <-starred_actors- Golden Earrings -directed_by-> Mitchell Leisen
 *   Kismet -in_language-> English
 *   The Fall -directed_by-> Tarsem Singh;  Lonely (no edges);  Kismet -related-> Elsewhere (KG 'other')
 * </pre>
 *
 * The models directory is a temp copy of src/test/resources/models (tiny ONNX files from
 * src/test/python/make_test_resources.py): a linear scorer with known weights over 4-d embeddings, and a
 * lookup-table "encoder".
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SubgraphRagProceduresTest {

    private static final List<Double> Q = List.of(0.1, 0.2, 0.3, 0.4);

    private InProcessNeo4j neo4j;
    private String previousModelsDir;

    private Path models;

    @BeforeAll
    void start() throws Exception {
        models = Files.createTempDirectory("kgqa-models-test");
        TestModels.copyTree(Path.of(getClass().getResource("/models").toURI()), models);
        // kgqa.text.embed always uses the default encoder name; the tiny one stands in for it here.
        TestModels.copyTree(models.resolve("encoder/tiny-encoder"), models.resolve("encoder/all-MiniLM-L6-v2"));
        // The same small MLP without its parts.onnx: every triple through the whole model.
        TestModels.copyTree(models.resolve("subgraphrag/tiny-mlp"), models.resolve("subgraphrag/tiny-mlp-whole"));
        Files.delete(models.resolve("subgraphrag/tiny-mlp-whole/parts.onnx"));
        TestModels.copyTree(models.resolve("subgraphrag/tiny-mlp-qr"), models.resolve("subgraphrag/tiny-mlp-qr-whole"));
        Files.delete(models.resolve("subgraphrag/tiny-mlp-qr-whole/parts.onnx"));
        TestModels.copyTree(models.resolve("subgraphrag/tiny-mlp-path"), models.resolve("subgraphrag/tiny-mlp-path-whole"));
        Files.delete(models.resolve("subgraphrag/tiny-mlp-path-whole/parts.onnx"));
        previousModelsDir = System.setProperty(ModelsDir.PROPERTY, models.toString());

        neo4j = InProcessNeo4j.builder()
                .withProcedure(SubgraphRagProcedures.class)
                .withFunction(TextFunctions.class)
                .build();
        neo4j.database().executeTransactionally(
                "CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON EACH [e.name]");
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'test', status: 'complete', loaded_at: datetime('2024-01-02T00:00:00Z')})
                CREATE (:KG {name: 'other', status: 'complete', loaded_at: datetime('2024-01-01T00:00:00Z')})
                CREATE (k:Entity {kg: 'test', id: 'Kismet', name: 'Kismet', embedding: [1.0, 0.0, 0.0, 0.0]})
                CREATE (d:Entity {kg: 'test', id: 'William Dieterle', name: 'William Dieterle', embedding: [0.0, 1.0, 0.0, 0.0]})
                CREATE (m:Entity {kg: 'test', id: 'Marlene Dietrich', name: 'Marlene Dietrich', embedding: [0.0, 0.0, 1.0, 0.0]})
                CREATE (e:Entity {kg: 'test', id: 'English', name: 'English', embedding: [0.0, 0.0, 0.0, 1.0]})
                CREATE (g:Entity {kg: 'test', id: 'Golden Earrings', name: 'Golden Earrings', embedding: [0.5, 0.5, 0.0, 0.0]})
                CREATE (p:Entity {kg: 'test', id: 'Portrait of Jennie', name: 'Portrait of Jennie', embedding: [0.0, 0.5, 0.5, 0.0]})
                CREATE (l:Entity {kg: 'test', id: 'Mitchell Leisen', name: 'Mitchell Leisen', embedding: [0.0, 0.0, 0.5, 0.5]})
                CREATE (f:Entity {kg: 'test', id: 'The Fall', name: 'The Fall', embedding: [0.2, 0.2, 0.2, 0.2]})
                CREATE (t:Entity {kg: 'test', id: 'Tarsem Singh', name: 'Tarsem Singh', embedding: [0.3, 0.3, 0.3, 0.3]})
                CREATE (:Entity {kg: 'test', id: 'Lonely', name: 'Lonely', embedding: [0.1, 0.1, 0.1, 0.1]})
                CREATE (x:Entity {kg: 'other', id: 'Elsewhere', name: 'Elsewhere'})
                CREATE (note:Note {text: 'not an entity'})
                CREATE (k)-[:directed_by]->(d)
                CREATE (k)-[:starred_actors]->(m)
                CREATE (k)-[:in_language]->(e)
                CREATE (g)-[:starred_actors]->(m)
                CREATE (p)-[:directed_by]->(d)
                CREATE (g)-[:directed_by]->(l)
                CREATE (f)-[:directed_by]->(t)
                CREATE (k)-[:related]->(x)
                CREATE (k)-[:has_note]->(note)
                CREATE (:Relation {kg: 'test', name: 'directed_by', embedding: [1.0, 1.0, 0.0, 0.0]})
                CREATE (:Relation {kg: 'test', name: 'starred_actors', embedding: [0.0, 1.0, 1.0, 0.0]})
                CREATE (:Relation {kg: 'test', name: 'in_language', embedding: [0.0, 0.0, 1.0, 1.0]})
                """);
        neo4j.database().executeTransactionally("CALL db.awaitIndexes(60)");
    }

    @AfterAll
    void stop() {
        if (neo4j != null) {
            neo4j.close();
        }
        try (Stream<Path> paths = Files.walk(models)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException ignored) {
            // a temp directory left behind is harmless
        }
        if (previousModelsDir == null) {
            System.clearProperty(ModelsDir.PROPERTY);
        } else {
            System.setProperty(ModelsDir.PROPERTY, previousModelsDir);
        }
    }

    // ------------------------------------------------------------------------------------- candidates

    private List<Map<String, Object>> candidates(List<?> topicIds, Map<String, Object> config) {
        return neo4j.rows("CALL kgqa.subgraphrag.candidates('test', $ids, $config) "
                + "YIELD head, relation, tail, headId, tailId, dde RETURN head, relation, tail, headId, tailId, dde",
                Map.of("ids", topicIds, "config", config));
    }

    private static List<String> lines(List<Map<String, Object>> rows) {
        return rows.stream().map(r -> r.get("head") + "|" + r.get("relation") + "|" + r.get("tail")).toList();
    }

    @Test
    void candidatesWithinHopsInBreadthFirstOrder() {
        List<String> oneHop = lines(candidates(List.of("Kismet"), Map.of("hops", 1)));
        assertEquals(3, oneHop.size());
        assertTrue(oneHop.containsAll(List.of("Kismet|directed_by|William Dieterle",
                "Kismet|starred_actors|Marlene Dietrich", "Kismet|in_language|English")), oneHop.toString());

        List<String> twoHops = lines(candidates(List.of("Kismet"), Map.of()));
        assertEquals(5, twoHops.size(), twoHops.toString());
        assertEquals(oneHop, twoHops.subList(0, 3), "the first hop comes first");
        assertTrue(twoHops.containsAll(List.of("Golden Earrings|starred_actors|Marlene Dietrich",
                "Portrait of Jennie|directed_by|William Dieterle")));

        List<String> threeHops = lines(candidates(List.of("Kismet"), Map.of("hops", 3)));
        assertEquals(6, threeHops.size());
        assertTrue(threeHops.contains("Golden Earrings|directed_by|Mitchell Leisen"));
        // Never other KGs' entities nor non-Entity nodes.
        assertTrue(threeHops.stream().noneMatch(l -> l.contains("Elsewhere") || l.contains("has_note")));
    }

    @Test
    void candidatesCarryTheHandComputedDde() {
        Map<String, List<Double>> dde = new HashMap<>();
        for (Map<String, Object> row : candidates(List.of("Kismet"), Map.of())) {
            dde.put(row.get("head") + "|" + row.get("tail"), doubles(row.get("dde")));
            assertEquals(row.get("head"), row.get("headId"));
        }
        // Entity codes [s0 | f1 | f2 | r1 | r2] on the 2-hop subgraph K->D, K->M, K->E, G->M, P->D (topic K):
        double[] k = {0, 1, 0, 0, 0, 0, 1, 0, 0, 0};
        double[] d = {1, 0, .5, .5, 0, 0, 0, 0, 0, 0}; // in-edges from K (topic) and P
        double[] m = d;
        double[] e = {1, 0, 0, 1, 0, 0, 0, 0, 0, 0};
        double[] g = {1, 0, 0, 0, 0, 0, 1, 0, 0, 0}; // out-edge to M only
        assertArrayEquals(concat(k, d), unbox(dde.get("Kismet|William Dieterle")), 1e-12);
        assertArrayEquals(concat(k, m), unbox(dde.get("Kismet|Marlene Dietrich")), 1e-12);
        assertArrayEquals(concat(k, e), unbox(dde.get("Kismet|English")), 1e-12);
        assertArrayEquals(concat(g, m), unbox(dde.get("Golden Earrings|Marlene Dietrich")), 1e-12);

        List<Map<String, Object>> noSeed = candidates(List.of("Kismet"), Map.of("includeSeed", false));
        assertEquals(16, doubles(noSeed.get(0).get("dde")).size());
    }

    @Test
    void candidatesAreCappedDeterministically() {
        List<String> all = lines(candidates(List.of("Kismet"), Map.of()));
        assertEquals(all.subList(0, 2), lines(candidates(List.of("Kismet"), Map.of("maxCandidates", 2))));
        String error = errorOf(() -> candidates(List.of("Kismet"), Map.of("maxCandidates", 2, "failOnTruncation", true)));
        assertTrue(error.contains("config.maxCandidates: more than 2 candidate triples within 2 hops"), error);
    }

    @Test
    void candidatesOfSeveralTopicsAndOfAnIsolatedOne() {
        List<String> both = lines(candidates(List.of("Kismet", "The Fall"), Map.of("hops", 1)));
        assertEquals(4, both.size());
        assertEquals("The Fall|directed_by|Tarsem Singh", both.get(3));
        assertEquals(List.of(), candidates(List.of("Lonely"), Map.of()));
    }

    @Test
    void candidatesValidateTheirArguments() {
        assertContains(errorOf(() -> candidates(List.of("Nobody"), Map.of())),
                "topicIds[0]: no entity with id 'Nobody' in KG 'test'");
        assertContains(errorOf(() -> candidates(List.of(), Map.of())), "topicIds must be a non-empty list");
        assertContains(errorOf(() -> candidates(List.of(42L), Map.of())), "topicIds[0] must be a string");
        assertContains(errorOf(() -> candidates(List.of("Kismet"), Map.of("hops", 0))), "config.hops must be between 1 and 6, got 0");
        assertContains(errorOf(() -> candidates(List.of("Kismet"), Map.of("hop", 2))), "config has an unknown key 'hop'");
        assertContains(errorOf(() -> candidates(List.of("Kismet"), Map.of("maxCandidates", "many"))),
                "config.maxCandidates must be an integer");
        assertContains(errorOf(() -> neo4j.rows("CALL kgqa.subgraphrag.candidates('nokg', ['Kismet'])", Map.of())),
                "kg: no knowledge graph named 'nokg' is loaded (loaded: other, test)");
        // Elsewhere exists, but in KG 'other'.
        assertContains(errorOf(() -> candidates(List.of("Elsewhere"), Map.of())), "topicIds[0]: no entity with id 'Elsewhere'");
    }

    // --------------------------------------------------------------------------------------- retrieve

    private List<Map<String, Object>> retrieve(String question, Map<String, Object> config) {
        return neo4j.rows("CALL kgqa.subgraphrag.retrieve($q, $config) YIELD head, relation, tail, score, rank "
                + "RETURN head, relation, tail, score, rank", Map.of("q", question, "config", config));
    }

    private static Map<String, Object> config(Object... keyValues) {
        Map<String, Object> map = new HashMap<>(Map.of("model", "tiny", "kg", "test"));
        for (int i = 0; i < keyValues.length; i += 2) {
            map.put((String) keyValues[i], keyValues[i + 1]);
        }
        return map;
    }

    @Test
    void retrieveScoresEveryFeatureInTheContractedLayout() {
        List<Map<String, Object>> rows = retrieve("who directed Kismet",
                config("questionEmbedding", Q, "topicEntities", List.of("Kismet"), "k", 100));
        assertEquals(5, rows.size());
        // The tiny model is linear with w[i] = (i + 1) / 100 over [q | head | rel | tail | dde_head | dde_tail].
        Map<String, double[]> embedding = Map.of(
                "Kismet", new double[] {1, 0, 0, 0}, "William Dieterle", new double[] {0, 1, 0, 0},
                "Marlene Dietrich", new double[] {0, 0, 1, 0}, "English", new double[] {0, 0, 0, 1},
                "Golden Earrings", new double[] {.5, .5, 0, 0}, "Portrait of Jennie", new double[] {0, .5, .5, 0});
        Map<String, double[]> relation = Map.of("directed_by", new double[] {1, 1, 0, 0},
                "starred_actors", new double[] {0, 1, 1, 0}, "in_language", new double[] {0, 0, 1, 1});
        Map<String, double[]> code = Map.of(
                "Kismet", new double[] {0, 1, 0, 0, 0, 0, 1, 0, 0, 0},
                "William Dieterle", new double[] {1, 0, .5, .5, 0, 0, 0, 0, 0, 0},
                "Marlene Dietrich", new double[] {1, 0, .5, .5, 0, 0, 0, 0, 0, 0},
                "English", new double[] {1, 0, 0, 1, 0, 0, 0, 0, 0, 0},
                "Golden Earrings", new double[] {1, 0, 0, 0, 0, 0, 1, 0, 0, 0},
                "Portrait of Jennie", new double[] {1, 0, 0, 0, 0, 0, 1, 0, 0, 0});
        double previous = Double.POSITIVE_INFINITY;
        for (int r = 0; r < rows.size(); r++) {
            Map<String, Object> row = rows.get(r);
            String head = (String) row.get("head");
            String tail = (String) row.get("tail");
            double[] features = concat(unbox(Q), embedding.get(head), relation.get((String) row.get("relation")),
                    embedding.get(tail), code.get(head), code.get(tail));
            assertEquals(36, features.length);
            double expected = 0;
            for (int i = 0; i < features.length; i++) {
                expected += features[i] * (i + 1) / 100.0;
            }
            double score = (Double) row.get("score");
            assertEquals(expected, score, 1e-5, head + "|" + tail);
            assertEquals((long) r + 1, row.get("rank"));
            assertTrue(score <= previous, "highest score first");
            previous = score;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tiny-mlp", "tiny-mlp-qr", "tiny-mlp-path"})
    void scoringByPartsEqualsTheWholeModel(String model) {
        // tiny-mlp-qr ends its rows with z_q ⊙ z_rel: Java writes the product for the whole model, parts.onnx
        // computes it itself, so the two paths check each other. tiny-mlp-path reads path codes in each entity
        // code: the whole model gets them per triple, parts.onnx per entity.
        for (List<String> topics : List.of(List.of("Kismet"), List.of("Golden Earrings", "The Fall"))) {
            Map<String, Double> byParts = scores(retrieve("q", config("model", model, "questionEmbedding", Q,
                    "topicEntities", topics, "hops", 3)));
            Map<String, Double> whole = scores(retrieve("q", config("model", model + "-whole", "questionEmbedding", Q,
                    "topicEntities", topics, "hops", 3)));
            assertEquals(whole.keySet(), byParts.keySet());
            assertTrue(whole.size() >= 3, whole.toString());
            for (Map.Entry<String, Double> entry : whole.entrySet()) {
                assertEquals(entry.getValue(), byParts.get(entry.getKey()), 1e-5, entry.getKey());
            }
            // A seeded MLP, not a constant: the check above compares distinct scores.
            assertTrue(whole.values().stream().distinct().count() > 1, whole.toString());
        }
    }

    @Test
    void scoringByPartsInSeveralBatches() {
        // One head and more tails than a parts.onnx call takes: the later batches carry tails only.
        int tails = PartsScorer.batchNodes(4 + 10) + 50; // tiny-mlp's entity rows: a 4-d embedding and a DDE of 10
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'star', status: 'test'})
                CREATE (hub:Entity {kg: 'star', id: 'Hub', name: 'Hub', embedding: [0.3, 0.1, 0.2, 0.4]})
                WITH hub
                UNWIND range(1, $tails) AS i
                CREATE (hub)-[:starred_actors]->(:Entity {kg: 'star', id: 'Leaf' + i, name: 'Leaf' + i,
                        embedding: [toFloat(i % 7), 1.0, toFloat(i % 3), 0.5]})
                """, Map.of("tails", tails));
        Map<String, Object> parts = new HashMap<>(config("model", "tiny-mlp", "questionEmbedding", Q,
                "topicEntities", List.of("Hub"), "hops", 1, "k", tails));
        parts.put("kg", "star");
        Map<String, Object> whole = new HashMap<>(parts);
        whole.put("model", "tiny-mlp-whole");
        Map<String, Double> byParts;
        Map<String, Double> byWhole;
        try {
            byParts = scores(retrieve("q", parts));
            byWhole = scores(retrieve("q", whole));
        } finally { // the other tests list the loaded KGs
            neo4j.database().executeTransactionally("MATCH (n {kg: 'star'}) DETACH DELETE n");
            neo4j.database().executeTransactionally("MATCH (k:KG {name: 'star'}) DELETE k");
        }
        assertEquals(tails, byParts.size());
        for (Map.Entry<String, Double> entry : byWhole.entrySet()) {
            assertEquals(entry.getValue(), byParts.get(entry.getKey()), 1e-5, entry.getKey());
        }
    }

    private static Map<String, Double> scores(List<Map<String, Object>> rows) {
        Map<String, Double> out = new HashMap<>();
        for (Map<String, Object> row : rows) {
            out.put(row.get("head") + "|" + row.get("relation") + "|" + row.get("tail"), (Double) row.get("score"));
        }
        return out;
    }

    @Test
    void retrieveKeepsTheTopK() {
        List<Map<String, Object>> all = retrieve("q", config("questionEmbedding", Q, "topicEntities", List.of("Kismet")));
        List<Map<String, Object>> top2 = retrieve("q", config("questionEmbedding", Q, "topicEntities", List.of("Kismet"), "k", 2));
        assertEquals(all.subList(0, 2), top2);
        List<Map<String, Object>> oneHop = retrieve("q", config("questionEmbedding", Q, "topicEntities", List.of("Kismet"), "hops", 1));
        assertEquals(3, oneHop.size());
    }

    @Test
    void retrieveCanSelectWholeWalksOfTheHopCount() {
        Map<String, Object> base = config("questionEmbedding", Q, "topicEntities", List.of("Kismet"), "hops", 2);
        List<Map<String, Object>> top = retrieve("q", base);
        Map<String, Object> paths = new HashMap<>(base);
        paths.put("select", "paths");
        List<Map<String, Object>> walks = retrieve("q", paths);
        // the same triples and scores, in walk order: every 2-hop walk's triples before the fill
        assertEquals(scores(top), scores(walks));
        paths.put("pathHops", 2);
        paths.put("k", 2);
        List<String> firstWalk = lines(retrieve("q", paths));
        assertEquals(2, firstWalk.size());
        assertTrue(firstWalk.get(0).startsWith("Kismet|"), firstWalk.toString());
        assertTrue(!firstWalk.get(1).startsWith("Kismet|"), firstWalk.toString());
        for (int r = 0; r < walks.size(); r++) {
            assertEquals((long) r + 1, walks.get(r).get("rank"));
        }
        paths.put("select", "best");
        assertContains(errorOf(() -> retrieve("q", paths)), "config.select must be 'top' or 'paths', got 'best'");
        paths.put("select", "paths");
        paths.put("pathHops", 3);
        assertContains(errorOf(() -> retrieve("q", paths)), "config.pathHops");
    }

    @Test
    void retrieveLinksBracketsAndFreeText() {
        // [brackets]: the name up to case; the question is embedded in the DB by the (tiny) encoder.
        List<String> bracket = lines(retrieve("who directed [kismet]", config("hops", 1)));
        assertEquals(3, bracket.size());
        assertTrue(bracket.stream().allMatch(l -> l.startsWith("Kismet|")), bracket.toString());
        // Free text: the longest exact name span ("the fall", not "fall"), relation words ignored.
        List<String> free = lines(retrieve("Who directed The Fall?", config("hops", 1)));
        assertEquals(List.of("The Fall|directed_by|Tarsem Singh"), free);
        // Several entities in free text, as kgqa.link.entities links them (at most 3).
        List<String> both = lines(retrieve("who directed Kismet and The Fall", config("hops", 1)));
        assertEquals(4, both.size(), both.toString());
        assertTrue(both.contains("The Fall|directed_by|Tarsem Singh"), both.toString());
        // A bracket with a typo falls back to free text (fuzzy: "Kismat" -> Kismet).
        assertEquals(3, retrieve("who directed [Kismat Tarsm]", config("hops", 1, "k", 100)).stream()
                .filter(r -> "Kismet".equals(r.get("head"))).count());
        // Explicit names or ids, several at once.
        assertEquals(4, retrieve("q", config("questionEmbedding", Q, "hops", 1,
                "topicEntities", List.of("Kismet", "tarsem singh"))).size());
    }

    @Test
    void retrieveDefaultsToTheMostRecentCompleteKg() {
        Map<String, Object> noKg = new HashMap<>(config("questionEmbedding", Q, "topicEntities", List.of("Kismet")));
        noKg.remove("kg");
        assertEquals(5, retrieve("q", noKg).size());
    }

    @Test
    void retrieveGivesClearErrors() {
        assertContains(errorOf(() -> retrieve("who directed [Kismet]", config("model", "nope"))),
                "config.model: no SubgraphRAG model 'nope' in " + models.resolve("subgraphrag").resolve("nope")
                        + " (missing model.onnx); run `kgqa train subgraphrag --kg test --name nope` to make it");
        assertContains(errorOf(() -> retrieve("who directed [Kismet]", config("k", 0))), "config.k must be > 0, got 0");
        assertContains(errorOf(() -> retrieve("who directed [Kismet]", config("k", -3))), "config.k must be > 0, got -3");
        assertContains(errorOf(() -> retrieve("q", config("questionEmbedding", Q, "topicEntities", List.of("Nobody")))),
                "config.topicEntities[0]: no entity with id or name 'Nobody' in KG 'test'");
        // a bracket that names no entity is linked as free text; when that finds nothing either, the same error
        assertContains(errorOf(() -> retrieve("who directed [Nobody At All]", config())),
                "question: no topic entity of KG 'test' found in 'who directed [Nobody At All]'");
        assertContains(errorOf(() -> retrieve("who directed zzzz", config())),
                "question: no topic entity of KG 'test' found in 'who directed zzzz'");
        assertContains(errorOf(() -> retrieve("who directed [Kismet]", config("kg", "nokg"))),
                "config.kg: no knowledge graph named 'nokg' is loaded");
        assertContains(errorOf(() -> retrieve("q", config("questionEmbedding", List.of(1.0, 2.0), "topicEntities", List.of("Kismet")))),
                "config.questionEmbedding must have 4 numbers (the model's embedding_dim), got 2");
        assertContains(errorOf(() -> retrieve("q", config("includeSeed", false, "questionEmbedding", Q, "topicEntities", List.of("Kismet")))),
                "config.includeSeed: SubgraphRAG model 'tiny' was trained with include_seed true (input_dim 36)");
        assertContains(errorOf(() -> retrieve("q", config("model", "../tiny"))), "config.model must be a model name");
        assertContains(errorOf(() -> retrieve("q", config("topK", 3))), "config has an unknown key 'topK'");
    }

    // ------------------------------------------------------------------------------------------ cosine

    private List<Map<String, Object>> cosine(List<?> topicIds, Map<String, Object> config) {
        return neo4j.rows("CALL kgqa.subgraphrag.cosine('test', $ids, $config) YIELD head, relation, tail, score, rank "
                + "RETURN head, relation, tail, score, rank", Map.of("ids", topicIds, "config", config));
    }

    @Test
    void cosineSumsTheHandComputedSimilarities() {
        // q = (.1, .2, .3, .4), |q| = sqrt(.3). Kismet (1,0,0,0): .18257; Dieterle (0,1,0,0): .36515;
        // Dietrich (0,0,1,0): .54772; English (0,0,0,1): .73030; directed_by (1,1,0,0): .38730;
        // starred_actors (0,1,1,0): .64550; in_language (0,0,1,1): .90370.
        List<Map<String, Object>> rows = cosine(List.of("Kismet"), Map.of("questionEmbedding", Q, "hops", 1));
        assertEquals(List.of("Kismet|in_language|English", "Kismet|starred_actors|Marlene Dietrich",
                "Kismet|directed_by|William Dieterle"), lines(rows));
        double[] expected = {0.18257 + 0.90370 + 0.73030, 0.18257 + 0.64550 + 0.54772, 0.18257 + 0.38730 + 0.36515};
        for (int r = 0; r < rows.size(); r++) {
            assertEquals(expected[r], (Double) rows.get(r).get("score"), 1e-4);
            assertEquals((long) r + 1, rows.get(r).get("rank"));
        }
    }

    @Test
    void cosineScoresTheSameCandidatesAsTheModel() {
        Map<String, Object> config = Map.of("questionEmbedding", Q);
        List<String> scored = new ArrayList<>(lines(cosine(List.of("Kismet"), config)));
        List<String> candidates = new ArrayList<>(lines(candidates(List.of("Kismet"), Map.of())));
        java.util.Collections.sort(scored);
        java.util.Collections.sort(candidates);
        assertEquals(candidates, scored);
        assertEquals(2, cosine(List.of("Kismet"), Map.of("questionEmbedding", Q, "k", 2)).size());
        assertEquals(cosine(List.of("Kismet"), config),
                cosine(List.of("Kismet"), Map.of("questionEmbedding", Q, "cacheEmbeddings", false)));
        assertEquals(List.of(), cosine(List.of("Lonely"), config));
    }

    @Test
    void cosineGivesClearErrors() {
        assertContains(errorOf(() -> cosine(List.of("Kismet"), Map.of())),
                "config.questionEmbedding is required: the question's vector");
        assertContains(errorOf(() -> cosine(List.of("Kismet"), Map.of("questionEmbedding", List.of(1.0, 2.0)))),
                "config.questionEmbedding has 2 numbers, but entity 'Kismet' of KG 'test' has a 4-d embedding");
        assertContains(errorOf(() -> cosine(List.of("Kismet"), Map.of("questionEmbedding", List.of("a")))),
                "config.questionEmbedding must be a non-empty list of numbers");
        assertContains(errorOf(() -> cosine(List.of("Nobody"), Map.of("questionEmbedding", Q))),
                "topicIds[0]: no entity with id 'Nobody' in KG 'test'");
        assertContains(errorOf(() -> cosine(List.of("Kismet"), Map.of("questionEmbedding", Q, "k", 0))),
                "config.k must be > 0, got 0");
        // no bound but int's: too big is said so, not "must be > 0"
        assertContains(errorOf(() -> cosine(List.of("Kismet"), Map.of("questionEmbedding", Q, "k", 1_000_000_000_000L))),
                "config.k must be at most 2147483647, got 1000000000000");
        assertContains(errorOf(() -> cosine(List.of("Kismet"), Map.of("questionEmbedding", Q, "k", 1e300))),
                "config.k must be at most 2147483647, got 1.0E300");
        assertContains(errorOf(() -> cosine(List.of("Kismet"), Map.of("questionEmbedding", Q, "model", "tiny"))),
                "config has an unknown key 'model'");
        assertContains(errorOf(() -> neo4j.rows("CALL kgqa.subgraphrag.cosine('nokg', ['Kismet'], {questionEmbedding: [1.0]})",
                Map.of())), "kg: no knowledge graph named 'nokg' is loaded");
    }

    // -------------------------------------------------------------------------------------- text.embed

    @Test
    void embedTokenisesRunsPoolsAndNormalises() {
        @SuppressWarnings("unchecked")
        List<Double> vector = (List<Double>) neo4j.single("RETURN kgqa.text.embed('Who directed KISMET?') AS v", Map.of());
        // Tiny encoder: ids [CLS]=2 who=5 directed=6 kis=7 ##met=8 ?=11 [SEP]=3; row(id) = [id, 1, id % 2, -1].
        double[] mean = {42.0 / 7, 1, 4.0 / 7, -1};
        double norm = Math.sqrt(mean[0] * mean[0] + mean[1] * mean[1] + mean[2] * mean[2] + mean[3] * mean[3]);
        for (int i = 0; i < 4; i++) {
            assertEquals(mean[i] / norm, vector.get(i), 1e-6);
        }
        assertEquals(null, neo4j.single("RETURN kgqa.text.embed(null) AS v", Map.of()));
    }

    // ----------------------------------------------------------------------------------------- helpers

    private static String errorOf(Runnable call) {
        QueryExecutionException error = assertThrows(QueryExecutionException.class, call::run);
        return error.getMessage();
    }

    private static void assertContains(String actual, String expected) {
        assertTrue(actual.contains(expected), "expected '" + expected + "' in: " + actual);
    }

    @SuppressWarnings("unchecked")
    private static List<Double> doubles(Object value) {
        return (List<Double>) value;
    }

    private static double[] unbox(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    private static double[] concat(double[]... parts) {
        List<Double> all = new ArrayList<>();
        for (double[] part : parts) {
            for (double x : part) {
                all.add(x);
            }
        }
        return unbox(all);
    }
}
