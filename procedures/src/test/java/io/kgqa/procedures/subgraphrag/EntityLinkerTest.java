package io.kgqa.procedures.subgraphrag;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The text helpers of the in-DB linker (the graph lookups are covered by SubgraphRagProceduresTest). */
class EntityLinkerTest {

    @Test
    void bracketsAreFoundAndRemovedLikeThePythonSide() {
        assertEquals(List.of("Lee Pace", "1999"), EntityLinker.bracketed("films of [Lee Pace] in [1999]?"));
        assertEquals(List.of(), EntityLinker.bracketed("no brackets [ ] here"));
        // Same string as kgqa.retrieve.subgraphrag.question_text: brackets to spaces, whitespace collapsed.
        assertEquals("who directed Kismet ?", EntityLinker.withoutBrackets("who  directed [Kismet]?"));
        assertEquals("a b", EntityLinker.withoutBrackets(" [a]\u00a0[b] "));
    }

    @Test
    void normaliseFoldsCaseAccentsAndPunctuation() {
        assertEquals("amelie", EntityLinker.normalize("Amélie"));
        assertEquals("schindler s list", EntityLinker.normalize("Schindler's List"));
        assertEquals("bd r", EntityLinker.normalize("bd-r"));
        assertEquals("monsters inc", EntityLinker.normalize("Monsters, Inc."));
    }

    @Test
    void wordsKeepInnerApostrophesAndAccentsForTheFullTextIndex() {
        assertEquals(List.of("Schindler's", "List"), EntityLinker.words("Schindler's List!"));
        assertEquals(List.of("Amélie", "bd", "r"), EntityLinker.words("[Amélie] bd-r"));
        assertEquals(List.of(), EntityLinker.words("?! \"*\""));
    }
}
