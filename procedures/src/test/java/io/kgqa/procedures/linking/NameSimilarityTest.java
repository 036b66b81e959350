package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The ways a name is typed other than as stored: typos, case, plurals, possessives. */
class NameSimilarityTest {

    @Test
    void editDistanceIsSymmetricAndCountsOneSwapAsOneEdit() {
        String[][] pairs = {{"herzog", "hertzog"}, {"hitchcock", "hitchcok"}, {"keaton", "keaotn"}, {"abc", "cab"}};
        for (String[] p : pairs) {
            assertEquals(NameSimilarity.editDistance(p[0], p[1], 3), NameSimilarity.editDistance(p[1], p[0], 3),
                    p[0] + "/" + p[1]);
        }
        assertEquals(1, NameSimilarity.editDistance("keaton", "keaotn", 1));
        assertEquals(2, NameSimilarity.editDistance("keaton", "kaeotn", 2)); // two swaps
        assertEquals(2, NameSimilarity.editDistance("keaton", "kaeotn", 1)); // over the bound: bound + 1
        assertEquals(0, NameSimilarity.editDistance("", "", 0));
    }

    @Test
    void theBoundGrowsByOneEditPerEightCharacters() {
        assertEquals(0, NameSimilarity.allowedEdits(0));
        assertEquals(1, NameSimilarity.allowedEdits(6));
        assertEquals(2, NameSimilarity.allowedEdits(10));
        assertEquals(3, NameSimilarity.allowedEdits(24));
        assertEquals(4, NameSimilarity.allowedEdits(32));
        assertEquals(5, NameSimilarity.allowedEdits(33));
    }

    @Test
    void theAlphabetDifferenceCountsLettersEitherSideLacks() {
        assertEquals(0, NameSimilarity.alphabetDifference(Set.of((int) 'a', (int) 'b'), new int[] {'b', 'a', 'a'}));
        assertEquals(2, NameSimilarity.alphabetDifference(Set.of((int) 'a', (int) 'b', (int) 'c'),
                new int[] {'a', 'b', 'd'}));
        assertEquals(1, NameSimilarity.alphabetDifference(Set.of(0x1f3ac), new int[] {}));
    }

    @Test
    void caseVariantsLeaveMinorWordsOfATitleSmall() {
        assertEquals(List.of("the lord of the rings", "The Lord Of The Rings", "The Lord of the Rings",
                "The lord of the rings"), NameSimilarity.caseVariants("the lord of the rings"));
        assertEquals(List.of("USA", "usa"), NameSimilarity.caseVariants("USA"));
        assertEquals(List.of(""), NameSimilarity.caseVariants(""));
    }

    @Test
    void pluralsGiveEveryPlausibleSingular() {
        assertEquals(List.of("box", "boxe"), NameSimilarity.singulars("boxes"));
        assertEquals(List.of("baby", "babi", "babie"), NameSimilarity.singulars("babies"));
        assertEquals(List.of("Film Noir"), NameSimilarity.singulars("Film Noirs"));
        assertEquals(List.of("cat"), NameSimilarity.singulars("cats")); // four letters or more, the s included
        assertEquals(List.of(), NameSimilarity.singulars("ads"));
        assertEquals(List.of(), NameSimilarity.singulars("crisis"));
    }

    @Test
    void aPossessiveNeedsAWordBeforeIt() {
        assertEquals("ab", NameSimilarity.withoutPossessive("ab's"));
        assertEquals("HAL", NameSimilarity.withoutPossessive("HAL'S"));
        assertNull(NameSimilarity.withoutPossessive("a's"));
        assertNull(NameSimilarity.withoutPossessive("'s"));
        assertNull(NameSimilarity.withoutPossessive("bus"));
    }
}
