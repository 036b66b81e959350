package io.kgqa.procedures.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.util.Json;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WordPieceTokenizerTest {

    private static final List<String> VOCAB = List.of(
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "who", "directed", "kis", "##met", "un", "##aff", "##able", "?", "a",
            "cafe", "-", "'", "s", "中", "##a");

    private static WordPieceTokenizer tiny(int maxLength) {
        Map<String, Integer> vocabulary = new HashMap<>();
        for (int i = 0; i < VOCAB.size(); i++) {
            vocabulary.put(VOCAB.get(i), i);
        }
        return new WordPieceTokenizer(vocabulary, maxLength, true, true);
    }

    @Test
    void greedyLongestMatchWithContinuations() {
        WordPieceTokenizer tokenizer = tiny(256);
        assertEquals(List.of("who", "directed", "kis", "##met", "?"), tokenizer.tokenize("Who directed KISMET?"));
        assertEquals(List.of("un", "##aff", "##able"), tokenizer.tokenize("unaffable"));
        assertArrayEquals(new long[] {2, 4, 5, 6, 7, 3}, tokenizer.encode("who directed kismet"));
    }

    @Test
    void unknownRestMakesTheWholeWordUnknown() {
        WordPieceTokenizer tokenizer = tiny(256);
        assertEquals(List.of("[UNK]"), tokenizer.tokenize("kismetx"));
        assertEquals(List.of("a", "[UNK]"), tokenizer.tokenize("a zzz"));
        assertEquals(List.of("[UNK]"), tokenizer.tokenize("a".repeat(101)), "over 100 characters");
        assertEquals(List.of("a", "##a"), tokenizer.tokenize("aa"));
    }

    @Test
    void punctuationAccentsAndCjk() {
        WordPieceTokenizer tokenizer = tiny(256);
        assertEquals(List.of("cafe", "-", "a"), tokenizer.tokenize("Café-a"));
        assertEquals(List.of("a", "'", "s"), tokenizer.tokenize("a's"));
        assertEquals(List.of("a", "中", "a"), tokenizer.tokenize("a中a"));
        assertEquals(List.of("a", "a"), tokenizer.tokenize("a\u00a0a"), "no-break space is whitespace");
        assertEquals(List.of("a", "##a"), tokenizer.tokenize("a\u200ba"), "zero-width space is a format char, dropped");
        assertTrue(WordPieceTokenizer.isPunctuation('$'), "ASCII symbols count as punctuation");
        assertTrue(WordPieceTokenizer.isPunctuation('«'));
        assertFalse(WordPieceTokenizer.isPunctuation('a'));
    }

    @Test
    void truncatesToMaxLengthWithSpecials() {
        WordPieceTokenizer tokenizer = tiny(5);
        assertArrayEquals(new long[] {2, 4, 4, 4, 3}, tokenizer.encode("who who who who who"));
        assertArrayEquals(new long[] {2, 3}, tokenizer.encode(""));
        assertThrows(IllegalArgumentException.class, () -> tiny(1));
    }

    @Test
    void requiresSpecialTokens() {
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> new WordPieceTokenizer(Map.of("[CLS]", 0, "[SEP]", 1), 8, true, true));
        assertTrue(error.getMessage().contains("[UNK]"));
    }

    /** The real all-MiniLM-L6-v2 vocabulary against ids produced by Hugging Face tokenizers (make_test_resources.py). */
    @Test
    @SuppressWarnings("unchecked")
    void matchesHuggingFaceTokenizersOnTrickyText() throws Exception {
        WordPieceTokenizer tokenizer = WordPieceTokenizer.fromVocabFile(resource("vocab.txt"), 256, true, true);
        List<Object> cases;
        try (InputStream in = getClass().getResourceAsStream("wordpiece_cases.json")) {
            cases = (List<Object>) Json.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
        assertTrue(cases.size() > 30);
        for (Object entry : cases) {
            Map<String, Object> c = (Map<String, Object>) entry;
            String text = (String) c.get("text");
            long[] expected = ((List<Object>) c.get("ids")).stream().mapToLong(x -> (Long) x).toArray();
            long[] got = c.get("keep") instanceof String special ? tokenizer.encode(text, special) : tokenizer.encode(text);
            assertArrayEquals(expected, got, "ids of " + text);
        }
        assertTrue(cases.stream().anyMatch(c -> ((Map<String, Object>) c).containsKey("keep")), "cases with [MASK]");
    }

    private Path resource(String name) throws URISyntaxException {
        return Path.of(getClass().getResource(name).toURI());
    }
}
