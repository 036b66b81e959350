package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which words of a KG's names are too common to pick a name out. */
class LinkingWordsTest {

    @Test
    void aSuffixMostCompaniesShareIsCommonAndADistinctiveWordIsNot() {
        // counts as in FB15k-237 (14,541 names): "Corporation" ends 26 of them, so "Microsoft" alone names
        // Microsoft Corporation; a word in 9 names still picks a few out
        LinkingWords words = new LinkingWords(Set.of(), Map.of("corporation", 26, "studios", 9, "language", 60),
                14_541, Map.of(), Set.of());
        assertTrue(words.commonInNames("corporation"));
        assertTrue(words.commonInNames("language"));
        assertFalse(words.commonInNames("studios"));
        assertFalse(words.commonInNames("microsoft"));
    }

    @Test
    void onALargeKgTheShareDecides() {
        LinkingWords words = new LinkingWords(Set.of(), Map.of("inc", 900, "records", 1_100), 1_000_000, Map.of(),
                Set.of());
        assertFalse(words.commonInNames("inc"));
        assertTrue(words.commonInNames("records"));
    }
}
