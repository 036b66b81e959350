package io.kgqa.procedures.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import io.kgqa.procedures.gsr.GsrProcedures;
import io.kgqa.procedures.linking.LinkingProcedures;
import io.kgqa.procedures.simgrag.SimGragProcedures;
import io.kgqa.procedures.subgraphrag.SubgraphRagProcedures;
import io.kgqa.procedures.text.TextFunctions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.QueryExecutionException;

/**
 * Issue 30: one long word through any procedure that takes text is refused in one line naming the limit, before
 * any work, and the database answers afterwards (it used to end in OutOfMemoryError within seconds).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TextLimitsTest {

    private static final String MILLION_LETTER_WORD = "a".repeat(1_000_000);
    /** Within the text limit, over the word limit. */
    private static final String LONG_WORD = "who directed " + "b".repeat(TextLimits.MAX_WORD_CHARS + 1);

    /** Every procedure and function that takes caller text, called with $text in that place. */
    private static final List<String> CALLS = List.of(
            "CALL kgqa.link.entities($text, {kg: 'tiny'})",
            "CALL kgqa.simgrag.retrieve($text, {kg: 'tiny'})",
            "CALL kgqa.simgrag.pattern($text, {kg: 'tiny'})",
            "CALL kgqa.simgrag.match([[$text, 'directed_by', 'UNKNOWN']], {kg: 'tiny'})",
            "CALL kgqa.simgrag.match([{head: 'Kismet', relation: $text, tail: '?'}], {kg: 'tiny'})",
            "CALL kgqa.gsr.chains($text, {kg: 'tiny'})",
            "CALL kgqa.gsr.retrieve($text, {kg: 'tiny'})",
            "CALL kgqa.subgraphrag.retrieve($text, {kg: 'tiny'})",
            "CALL kgqa.subgraphrag.walks($text, {kg: 'tiny'})",
            "CALL kgqa.link.entities('who directed Kismet', {kg: $text})",
            "CALL kgqa.gsr.chains('who directed [Kismet]', {kg: 'tiny', topicSpans: [$text]})");

    private InProcessNeo4j neo4j;

    @BeforeAll
    void start() {
        neo4j = InProcessNeo4j.builder()
                .withProcedure(LinkingProcedures.class)
                .withProcedure(SimGragProcedures.class)
                .withProcedure(GsrProcedures.class)
                .withProcedure(SubgraphRagProcedures.class)
                .withFunction(TextFunctions.class)
                .build()
                .withEntitySchema();
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'tiny', status: 'complete', loaded_at: datetime()})
                CREATE (:Entity {kg: 'tiny', id: 'Kismet', name: 'Kismet'})-[:directed_by]->
                       (:Entity {kg: 'tiny', id: 'William Dieterle', name: 'William Dieterle'})
                """);
    }

    @AfterAll
    void stop() {
        neo4j.close();
    }

    @Test
    void aMillionLetterWordIsOneLineNamingTheLimitAndTheDatabaseStillAnswers() {
        for (String call : CALLS) {
            String message = errorOf(call, MILLION_LETTER_WORD);
            assertTrue(message.contains("is 1000000 characters long; kgqa procedures take at most "
                    + TextLimits.MAX_TEXT_CHARS + " characters"), call + ": " + message);
            assertOneLine(call, message);
            assertEquals(1L, neo4j.single("RETURN 1 AS one", Map.of()), call);
        }
        String message = errorOf("RETURN kgqa.text.embed($text) AS v", MILLION_LETTER_WORD);
        assertTrue(message.contains("text is 1000000 characters long"), message);
        // The database still links, not only answers RETURN 1.
        assertEquals("Kismet", neo4j.single(
                "CALL kgqa.link.entities('who directed [Kismet]', {kg: 'tiny'}) YIELD name RETURN name", Map.of()));
    }

    @Test
    void aWordOverTheWordLimitIsRefusedInsideAShortQuestion() {
        for (String call : CALLS.subList(0, 9)) {
            String message = errorOf(call, LONG_WORD);
            assertTrue(message.contains("has a word longer than " + TextLimits.MAX_WORD_CHARS + " characters"),
                    call + ": " + message);
            assertOneLine(call, message);
        }
    }

    @Test
    void aPercentInTheCallersTextIsOneLineNotADatabaseError() {
        // Neo4j formats a status-carrying message with String.format: "%r" used to end in a DatabaseError.
        for (String call : List.of("CALL kgqa.link.entities('who', {kg: $text})",
                "CALL kgqa.simgrag.match([[$text]], {kg: 'tiny'})")) {
            String message = errorOf(call, "100%r %s %n %");
            assertTrue(message.contains("100%r %s %n %"), call + ": " + message);
            assertOneLine(call, message);
        }
        // "%s" used to be filled with the exception itself: "unknown key 'io.kgqa...BadArgumentException: ...'"
        String unknownKey = errorOf("RETURN kgqa.text.embed('x', {`%s`: $text}) AS v", "x");
        assertTrue(unknownKey.contains("config has an unknown key '%s'; known keys: encoder, kg"), unknownKey);
        assertFalse(unknownKey.contains("io.kgqa"), unknownKey);
        assertEquals("a 5% cut", new BadArgumentException("a 5% cut").text());
    }

    @Test
    void textWithinTheLimitsPassesAsItIs() {
        String question = "who directed " + "c".repeat(TextLimits.MAX_WORD_CHARS) + " " + "d ".repeat(1_500);
        assertEquals(question, TextLimits.question(question, "question"));
        assertEquals(null, TextLimits.question(null, "question"));
        TextLimits.within(List.of(List.of("Kismet", "directed_by", "?"), Map.of("head", "x")), "pattern");
        BadArgumentException nested = assertThrows(BadArgumentException.class,
                () -> TextLimits.within(List.of(List.of("Kismet", "r", "e".repeat(5_000))), "pattern"));
        assertEquals("pattern[0][2] is 5000 characters long; kgqa procedures take at most 4000 characters",
                nested.getMessage());
    }

    private String errorOf(String call, String text) {
        QueryExecutionException error = assertThrows(QueryExecutionException.class,
                () -> neo4j.rows(call, Map.of("text", text)));
        return error.getMessage();
    }

    private static void assertOneLine(String call, String message) {
        assertFalse(message.contains("\n"), call + ": " + message);
        assertFalse(message.contains("Exception"), call + ": " + message);
        assertTrue(message.length() < 300, call + ": " + message.length() + " characters");
    }
}
