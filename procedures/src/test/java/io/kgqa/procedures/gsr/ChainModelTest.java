package io.kgqa.procedures.gsr;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.TestModels;
import io.kgqa.procedures.onnx.ModelCache;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.util.Json;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The ONNX Runtime road of the chain generator on models/gsr/tiny, whose next-token table is known: the
 * chains it returns must be the ones make_test_resources.py found by brute force (expected.json).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChainModelTest {

    private TestModels models;

    @BeforeAll
    void setUp() throws Exception {
        models = TestModels.empty("kgqa-gsr-models").copy("gsr/tiny", "gsr/tiny");
    }

    @AfterAll
    void tearDown() throws Exception {
        models.close();
    }

    @Test
    @SuppressWarnings("unchecked")
    void generatesTheKnownBestChainsWithTheirScores() throws Exception {
        List<Object> expected = (List<Object>) Json.parse(Files.readString(models.root().resolve("gsr/tiny/expected.json")));
        try (ModelCache.Lease<ChainModel> model = ChainModel.acquire(named("tiny"))) {
            List<Chain> chains = model.get().chains("who directed [MASK]", 10);
            assertEquals(10, chains.size());
            for (int i = 0; i < 6; i++) {
                Map<String, Object> want = (Map<String, Object>) expected.get(i);
                List<String> tokens = chains.get(i).steps().stream()
                        .map(s -> s.relation() + (s.out() ? ">" : "<")).toList();
                assertEquals(want.get("tokens"), tokens, "chain " + i);
                assertEquals(((Number) want.get("score")).doubleValue(), chains.get(i).score(), 1e-5, "score " + i);
            }
            assertEquals(List.of(List.of("directed_by", "out")), chains.get(0).asLists());
            assertTrue(chains.stream().allMatch(c -> c.steps().size() <= model.get().maxChain()));
        }
    }

    private static ModelsDir.Ref named(String name) {
        return ModelsDir.Ref.of("gsr", "GSR model", name, "test");
    }

    @Test
    void aMissingModelNamesTheTrainCommand() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ChainModel.acquire(named("absent")));
        assertTrue(e.getMessage().contains("no GSR model 'absent'"), e.getMessage());
        assertTrue(e.getMessage().contains("kgqa train gsr --kg test --name absent"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ChainModel.acquire(named("../escape")));
        // a KG's own model: kgs/<kg>/gsr, made by `kgqa train all`
        IllegalArgumentException own = assertThrows(IllegalArgumentException.class,
                () -> ChainModel.acquire(ModelsDir.Ref.of("gsr", "GSR model", null, "fb15k")));
        assertTrue(own.getMessage().contains("no GSR model for KG 'fb15k'"), own.getMessage());
        assertTrue(own.getMessage().contains("kgqa train all --kg fb15k"), own.getMessage());
    }

    @Test
    void masksTheTopicEntityAsTheTrainerDoes() {
        assertEquals("who directed [MASK]", QuestionMasking.masked("Who  directed [Kismet]?".replace("?", ""), List.of()));
        assertEquals("who directed [MASK] ?", QuestionMasking.masked("who directed kismet ?", List.of("Kismet")));
        assertEquals("films of [MASK] and heat", QuestionMasking.masked("films of Ronin and Heat", List.of("ronin", "heat")));
        assertEquals("who wrote it", QuestionMasking.masked("Who wrote it", List.of("absent")));
    }
}
