package io.kgqa.procedures.linking;

import static io.kgqa.procedures.linking.LinkScoring.CAPITALISED;
import static io.kgqa.procedures.linking.LinkScoring.HEAD_IN_LOWER_CASE;
import static io.kgqa.procedures.linking.LinkScoring.NEXT_TO_CONTENT_WORD;
import static io.kgqa.procedures.linking.LinkScoring.NOT_CAPITALISED;
import static io.kgqa.procedures.linking.LinkScoring.ONE_WORD_PENALTY;
import static io.kgqa.procedures.linking.LinkScoring.ORDINARY_WORDS_BEFORE_NAME;
import static io.kgqa.procedures.linking.LinkScoring.ORDINARY_WORDS_BESIDE_NAME;
import static io.kgqa.procedures.linking.LinkScoring.SECONDARY_RATIO;
import static io.kgqa.procedures.linking.LinkScoring.QUESTION_WORDS_CAPITALISED;
import static io.kgqa.procedures.linking.LinkScoring.QUESTION_WORDS_ONLY;
import static io.kgqa.procedures.linking.LinkScoring.RELATION_CUE;
import static io.kgqa.procedures.linking.LinkScoring.SHORT_SPAN_CHARS;
import static io.kgqa.procedures.linking.LinkScoring.SHORT_SPAN_PENALTY;
import static io.kgqa.procedures.linking.LinkScoring.STOP_CHAR_WEIGHT;
import static io.kgqa.procedures.linking.LinkScoring.SURNAME_IN_LOWER_CASE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Each named weight does what its comment says, and the weights keep the order the linker relies on. */
class LinkScoringTest {

    private static final Set<String> STOP = stop();

    private static Set<String> stop() {
        Set<String> stop = new HashSet<>(LinkText.STOPWORDS);
        stop.add("directed");
        return stop;
    }

    /** The score of one candidate in {@code question}, the way the linker computes it. */
    private static double score(String question, Candidate c) {
        List<LinkText.Token> tokens = LinkText.tokens(question);
        Set<String> cues = LinkText.stems(tokens.stream().map(LinkText.Token::norm).toList());
        return LinkScoring.score(c, tokens, LinkText.content(tokens, STOP), LinkText.hasCase(tokens, question), cues);
    }

    private static Candidate candidate(String name, int start, int end, String how, double match, String... types) {
        return new Candidate(null, name, name, start, end, how, match, 1, List.of(types));
    }

    /** The length part of the score: {@code contentChars + STOP_CHAR_WEIGHT * stopChars} characters, name words. */
    private static double lengthPart(double match, double weight, int nameWords) {
        return match * (1 - SHORT_SPAN_PENALTY * Math.exp(-weight / SHORT_SPAN_CHARS)
                - ONE_WORD_PENALTY * Math.exp(-(nameWords - 1)));
    }

    @Test
    void matchQualitiesRankExactOverEveryOtherLookup() {
        double[] best = {1.0, LinkScoring.EXACT_CASE_UNKNOWN, LinkScoring.EXACT_OTHER_CASE, LinkScoring.FULLTEXT_MATCH,
            LinkScoring.SINGULAR_MATCH, LinkScoring.HEAD_MATCH, LinkScoring.PARTIAL_MATCH, LinkScoring.VECTOR_MATCH};
        for (int i = 1; i < best.length; i++) {
            assertTrue(best[i] <= best[i - 1], "quality " + i);
        }
        assertEquals(LinkScoring.SINGULAR_MATCH, LinkScoring.SQUEEZED_MATCH);
        assertEquals(LinkScoring.HEAD_MATCH, LinkScoring.INITIALS_MATCH);
        // a surname said alone outranks one typo in a short name (5 letters), not one in a longer name (9)
        assertTrue(1 - LinkScoring.EDIT_PENALTY / 5 < LinkScoring.PARTIAL_MATCH);
        assertTrue(1 - LinkScoring.EDIT_PENALTY / 9 > LinkScoring.PARTIAL_MATCH);
    }

    @Test
    void aCapitalisedNameTypedAloneGetsTheCapitalBonus() {
        Candidate heat = candidate("Heat", 2, 3, "exact", 1.0);
        assertEquals(lengthPart(1.0, 4, 1) * CAPITALISED, score("who directed Heat", heat));
        assertTrue(heat.capitalised);
    }

    @Test
    void aLowerCaseSpanInAQuestionWithCapitalsLosesAndWithoutCapitalsIsLeftAlone() {
        Candidate heat = candidate("Heat", 2, 3, "exact", 1.0);
        assertEquals(lengthPart(1.0, 4, 1) * NOT_CAPITALISED, score("who directed heat with Tom", heat));
        assertFalse(heat.capitalised);
        assertEquals(lengthPart(1.0, 4, 1), score("who directed heat", heat));
    }

    @Test
    void aContentWordNextToTheSpanSuggestsALongerName() {
        assertEquals(lengthPart(1.0, 4, 1) * NEXT_TO_CONTENT_WORD,
                score("who directed heat wave", candidate("Heat", 2, 3, "exact", 1.0)));
        assertEquals(lengthPart(1.0, 4, 1) * NEXT_TO_CONTENT_WORD * NEXT_TO_CONTENT_WORD,
                score("who directed cold heat wave", candidate("Heat", 3, 4, "exact", 1.0)));
    }

    @Test
    void aSpanOfQuestionWordsCountsLittleUnlessTypedAsTheName() {
        // question words count STOP_CHAR_WEIGHT per character; "heat" next to it is a content word
        assertEquals(lengthPart(1.0, 0 + STOP_CHAR_WEIGHT * 8, 1) * QUESTION_WORDS_ONLY * NEXT_TO_CONTENT_WORD,
                score("who directed heat", candidate("Directed", 1, 2, "exact", 1.0)));
        // capitalised, but the name continues ("Directed Heat"): not as typed
        assertEquals(lengthPart(0.96, 0 + STOP_CHAR_WEIGHT * 8, 1) * QUESTION_WORDS_CAPITALISED * NEXT_TO_CONTENT_WORD
                        * CAPITALISED, score("who Directed Heat", candidate("Directed", 1, 2, "exact", 0.96)));
        // the director of Up: typed exactly as the entity is named, standing alone
        assertEquals(lengthPart(1.0, 0 + STOP_CHAR_WEIGHT * 2, 1) * CAPITALISED,
                score("the director of Up", candidate("Up", 3, 4, "exact", 1.0)));
    }

    @Test
    void aSurnameAloneCountsOnlyWhenTypedAsAName() {
        double part = LinkScoring.PARTIAL_MATCH;
        // lower-case question: it cannot show the name, so it counts less; "direct" next to it is content
        assertEquals(lengthPart(part, 6, 2) * SURNAME_IN_LOWER_CASE * NEXT_TO_CONTENT_WORD,
                score("what did herzog direct", candidate("Werner Herzog", 2, 3, "partial", part)));
        // a question with capitals and the surname in lower case: no name at all
        assertEquals(0.0, score("what did herzog direct in Germany", candidate("Werner Herzog", 2, 3, "partial", part)));
        // typed as a name, standing alone
        assertEquals(lengthPart(part, 6, 2) * NEXT_TO_CONTENT_WORD * CAPITALISED,
                score("what did Herzog direct", candidate("Werner Herzog", 2, 3, "partial", part)));
    }

    @Test
    void aNameSaidByItsHeadMustBeCapitalisedAndCountsTheWordsSaid() {
        // a question with capitals and the head in lower case: an ordinary word, not a name
        assertEquals(0.0, score("what is microsoft in Seattle", candidate("Microsoft Corporation", 2, 3, "head", 0.9)));
        // a question all in lower case cannot show it: a name still, counting less
        assertEquals(lengthPart(0.9, 9, 1) * HEAD_IN_LOWER_CASE,
                score("what is microsoft", candidate("Microsoft Corporation", 2, 3, "head", 0.9)));
        // one word said: the one-word penalty applies although the name has two
        assertEquals(lengthPart(0.9, 9, 1) * CAPITALISED,
                score("what is Microsoft", candidate("Microsoft Corporation", 2, 3, "head", 0.9)));
    }

    @Test
    void ordinaryWordsRightBeforeANameSayWhatKindItIs() {
        String question = "who plays in the band radiohead";
        boolean[] ordinary = {true, true, true, true, true, false};
        Candidate theBand = candidate("The Band", 3, 5, "exact", 1.0);
        Candidate radiohead = candidate("Radiohead", 5, 6, "exact", 1.0);
        double alone = score(question, theBand);
        double name = score(question, radiohead);
        LinkScoring.yieldToNames(List.of(theBand, radiohead), ordinary, new boolean[6], LinkText.tokens(question));
        assertEquals(alone * ORDINARY_WORDS_BEFORE_NAME, theBand.score);
        assertEquals(name, radiohead.score);
        assertTrue(theBand.score < radiohead.score * SECONDARY_RATIO, "no second topic: " + theBand.score);
        // after the name, they are ordinary words beside it ("radiohead the band" is rare, and says less)
        Candidate after = candidate("The Band", 1, 3, "exact", 1.0);
        Candidate first = candidate("Radiohead", 0, 1, "exact", 1.0);
        String reversed = "radiohead the band members";
        double afterAlone = score(reversed, after);
        score(reversed, first);
        LinkScoring.yieldToNames(List.of(after, first), new boolean[] {false, true, true, true}, new boolean[4],
                LinkText.tokens(reversed));
        assertEquals(afterAlone * ORDINARY_WORDS_BESIDE_NAME, after.score);
        // without an article, ordinary words before a name are as often a name of their own ("maryland senators")
        Candidate maryland = candidate("Maryland", 4, 5, "exact", 1.0);
        Candidate senators = candidate("Senators", 5, 6, "exact", 1.0);
        String states = "who are the current maryland senators";
        double marylandAlone = score(states, maryland);
        score(states, senators);
        LinkScoring.yieldToNames(List.of(maryland, senators), new boolean[] {true, true, true, true, true, false},
                new boolean[6], LinkText.tokens(states));
        assertEquals(marylandAlone * ORDINARY_WORDS_BESIDE_NAME, maryland.score);
    }

    @Test
    void ordinaryWordsYieldToANameElsewhereInTheQuestion() {
        String question = "who was the president of pakistan";
        boolean[] ordinary = {true, true, true, true, true, false}; // "pakistan" is not a common English word here
        Candidate president = candidate("President", 3, 4, "exact", 1.0);
        Candidate pakistan = candidate("Pakistan", 5, 6, "exact", 1.0);
        double alone = score(question, president);
        double name = score(question, pakistan);
        assertTrue(alone > name, "as typed, the ordinary word scores higher: " + alone + " vs " + name);
        LinkScoring.yieldToNames(List.of(president, pakistan), ordinary);
        assertEquals(alone * ORDINARY_WORDS_BESIDE_NAME, president.score);
        assertEquals(name, pakistan.score);
        assertTrue(pakistan.score > president.score);
        // with no name beside them, ordinary words keep their score ("who was in crash")
        Candidate only = candidate("President", 3, 4, "exact", 1.0);
        score(question, only);
        LinkScoring.yieldToNames(List.of(only), ordinary);
        assertEquals(alone, only.score);
    }

    @Test
    void aRelationOfTheEntityNamedInTheQuestionIsTheLastSmallNudge() {
        double without = score("who directed heat", candidate("Heat", 2, 3, "exact", 1.0, "written_by"));
        double with = score("who directed heat", candidate("Heat", 2, 3, "exact", 1.0, "film.directed_by"));
        assertEquals(without * RELATION_CUE, with);
        assertTrue(RELATION_CUE < CAPITALISED && 1 / RELATION_CUE > NOT_CAPITALISED, "a nudge, not a verdict");
    }

    @Test
    void longerNamesScoreHigherAtEqualMatch() {
        String q = "who directed The Godfather Part II";
        double whole = score(q, candidate("The Godfather Part II", 2, 6, "exact", 1.0));
        double part = score(q, candidate("The Godfather", 2, 4, "exact", 1.0));
        assertTrue(whole > part, whole + " vs " + part);
        assertTrue(LinkScoring.MIN_SCORE < LinkScoring.SECONDARY_RATIO && LinkScoring.SECONDARY_RATIO < LinkScoring.TWIN_RATIO);
    }
}
