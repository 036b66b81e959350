package io.kgqa.procedures.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import io.kgqa.procedures.TestModels;
import io.kgqa.procedures.subgraphrag.SubgraphRagProcedures;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * The static encoder on a hand-made table: model2vec's tokenisation rules (no specials, [UNK] dropped, added
 * tokens whole, token and character limits), mean + L2 normalisation, the safetensors reader, and the choice
 * of encoder by a KG's recorded embedding_model, including SubgraphRAG's refusal of a model trained on
 * another encoder's features. tests/test_encoder_static.py checks the real distilled model against Python.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class StaticEmbeddingTest {

    // ids: [PAD]=0 [UNK]=1 who=2 direct=3 ##ed=4 kis=5 ##met=6 ?=7 a=8
    private static final List<String> VOCAB = List.of("[PAD]", "[UNK]", "who", "direct", "##ed", "kis", "##met", "?", "a");
    private static final int DIM = 3;

    private TestModels models;
    private InProcessNeo4j neo4j;

    @BeforeAll
    void start() throws Exception {
        models = TestModels.empty("kgqa-static-test");
        TestModels.copyTree(Path.of(getClass().getResource("/models").toURI()), models.root());
        writeStatic(models.root().resolve("encoder/tiny-static"), 4, 40);
        neo4j = InProcessNeo4j.builder()
                .withFunction(TextFunctions.class)
                .withProcedure(SubgraphRagProcedures.class)
                .build();
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'fast', status: 'complete', embedding_model: 'tiny-static'})
                CREATE (:KG {name: 'plain', status: 'complete'})
                CREATE (:Entity {kg: 'fast', id: 'Kismet', name: 'Kismet', embedding: [1.0, 0.0, 0.0, 0.0]})
                """);
    }

    @AfterAll
    void stop() throws IOException {
        if (neo4j != null) {
            neo4j.close();
        }
        if (models != null) {
            models.close();
        }
    }

    /** Row i of the table is [i, 1, i % 2]. */
    static void writeStatic(Path dir, int maxLength, int maxChars) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("vocab.txt"), String.join("\n", VOCAB) + "\n");
        Files.writeString(dir.resolve("encoder.json"), """
                {"name": "tiny-static", "kind": "static", "dimension": %d, "max_length": %d, "max_chars": %d,
                 "do_lower_case": true, "strip_accents": true, "unk_token": "[UNK]",
                 "added_tokens": ["[PAD]", "[UNK]"], "weights": "model.safetensors", "tensor": "embeddings"}
                """.formatted(DIM, maxLength, maxChars));
        ByteBuffer data = ByteBuffer.allocate(VOCAB.size() * DIM * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < VOCAB.size(); i++) {
            data.putFloat(i).putFloat(1).putFloat(i % 2);
        }
        String header = "{\"__metadata__\":{\"format\":\"pt\"},\"embeddings\":{\"dtype\":\"F32\",\"shape\":["
                + VOCAB.size() + "," + DIM + "],\"data_offsets\":[0," + data.capacity() + "]}}";
        byte[] headerBytes = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer file = ByteBuffer.allocate(8 + headerBytes.length + data.capacity()).order(ByteOrder.LITTLE_ENDIAN);
        file.putLong(headerBytes.length).put(headerBytes).put(data.array());
        Files.write(dir.resolve("model.safetensors"), file.array());
    }

    private StaticEmbedding load(int maxLength, int maxChars) throws IOException {
        Path dir = Files.createTempDirectory("kgqa-static-one");
        writeStatic(dir, maxLength, maxChars);
        try {
            return StaticEmbedding.load(dir, io.kgqa.procedures.util.Json.readObject(dir.resolve("encoder.json")));
        } finally {
            TestModels.deleteTree(dir);
        }
    }

    @Test
    void tokensWithoutSpecialsAndWithoutUnknowns() throws IOException {
        StaticEmbedding table = load(512, 3072);
        assertArrayEquals(new int[] {2, 3, 4, 5, 6, 7}, table.ids("Who directed KISMET?"));
        assertArrayEquals(new int[] {2}, table.ids("who zebra"), "an unknown word is dropped, not averaged");
        assertArrayEquals(new int[] {2, 0, 8}, table.ids("who [PAD] a [UNK]"), "added tokens are matched whole");
        assertArrayEquals(new int[] {}, table.ids(""));
    }

    @Test
    void truncatesTokensBeforeDroppingUnknownsAndCutsCharacters() throws IOException {
        assertArrayEquals(new int[] {2, 2}, load(3, 3072).ids("who zebra who a a"));
        assertArrayEquals(new int[] {8}, load(512, 2).ids("a who"));
    }

    @Test
    void meanOfRowsL2Normalised() throws IOException {
        StaticEmbedding table = load(512, 3072);
        float[] v = table.embed("who direct"); // rows [2,1,0] and [3,1,1]: mean [2.5, 1, 0.5]
        double norm = Math.sqrt(2.5 * 2.5 + 1 + 0.25);
        assertArrayEquals(new float[] {(float) (2.5 / norm), (float) (1 / norm), (float) (0.5 / norm)}, v, 1e-6f);
        assertArrayEquals(new float[] {0, 0, 0}, table.embed("zebra"), "no known token: the zero vector");
    }

    @Test
    void embedFunctionPicksTheKgsEncoder() {
        List<Double> byKg = embed("RETURN kgqa.text.embed('who direct', {kg: 'fast'}) AS v");
        List<Double> byName = embed("RETURN kgqa.text.embed('who direct', {encoder: 'tiny-static'}) AS v");
        assertEquals(byName, byKg);
        assertEquals(DIM, byKg.size());
        QueryExecutionException both = assertThrows(QueryExecutionException.class,
                () -> embed("RETURN kgqa.text.embed('x', {kg: 'fast', encoder: 'tiny-static'}) AS v"));
        assertTrue(both.getMessage().contains("config: give kg or encoder, not both"), both.getMessage());
        QueryExecutionException unknown = assertThrows(QueryExecutionException.class,
                () -> embed("RETURN kgqa.text.embed('x', {kg: 'nope'}) AS v"));
        assertTrue(unknown.getMessage().contains("config.kg: no knowledge graph named 'nope'"), unknown.getMessage());
    }

    @Test
    void subgraphRagRefusesAModelTrainedOnAnotherEncoder() {
        QueryExecutionException e = assertThrows(QueryExecutionException.class, () -> neo4j.database()
                .executeTransactionally("CALL kgqa.subgraphrag.retrieve('who directed Kismet', {kg: 'fast', model: 'tiny-mlp'})",
                        Map.of(), r -> r.stream().count()));
        assertTrue(e.getMessage().contains("SubgraphRAG model 'tiny-mlp' was trained on tiny-encoder embeddings but KG"
                + " 'fast' was embedded with tiny-static; train one on this KG"), e.getMessage());
    }

    @SuppressWarnings("unchecked")
    private List<Double> embed(String query) {
        return neo4j.database().executeTransactionally(query, Map.of(), r -> (List<Double>) r.next().get("v"));
    }
}
