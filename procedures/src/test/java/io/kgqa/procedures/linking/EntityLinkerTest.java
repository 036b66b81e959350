package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The graph-free pieces of the linker, end to end across its parts. The expected values are the linker's
 * results as they stand: a change to any of them changes which entities questions link to.
 */
class EntityLinkerTest {

    /** The stop words, relation words of a KG with directed_by, starred_actors and has_tags, and what its questions ask with. */
    private static final Set<String> STOP = stop("directed", "starred", "actors", "tags", "films", "star");

    private static Set<String> stop(String... relationWords) {
        Set<String> stop = new HashSet<>(LinkText.STOPWORDS);
        stop.addAll(List.of(relationWords));
        return stop;
    }

    // ------------------------------------------------------------------------------ text primitives

    @Test
    void normaliseFoldsCaseAccentsCompatibilityFormsAndPunctuation() {
        assertEquals("amelie", LinkText.normalize("Amélie"));
        assertEquals("schindler s list", LinkText.normalize("Schindler's List"));
        assertEquals("bd r", LinkText.normalize("bd-r"));
        assertEquals("monsters inc", LinkText.normalize("Monsters, Inc."));
        assertEquals("film 2", LinkText.normalize("\ufb01lm \u00b2")); // ligature and superscript (NFKD)
        assertEquals("foo bar", LinkText.normalize("foo_bar"));
        assertEquals("ca va", LinkText.normalize("Ça  va?"));
        assertEquals("istanbul", LinkText.normalize("İstanbul"));
        assertEquals("strasse", LinkText.normalize("Straße")); // no decomposition: folded as typed in Latin
        assertEquals("oedipe", LinkText.normalize("Œdipe"));
        assertEquals("日本 映画", LinkText.normalize("日本 映画"));
        assertEquals("\u03bf\u03b4\u03c5\u03c3\u03c3\u03b5\u03b1\u03c2", LinkText.normalize("ΟΔΥΣΣΕΑΣ")); // final sigma
        assertEquals("x y", LinkText.normalize("x\u00a0y"));
        assertEquals("ab", LinkText.normalize("a\u0301\u0327b")); // combining marks of any class dropped
        assertEquals("", LinkText.normalize("?!-"));
    }

    @Test
    void tokensSplitOnAnyWhitespaceAndKeepAccentsAndApostrophesAsTyped() {
        assertEquals(List.of(t("Who", "who"), t("directed", "directed"), t("Amélie?", "amelie")),
                LinkText.tokens("  Who directed  Amélie?"));
        assertEquals(List.of(t("what's", "what s"), t("in", "in"), t("a", "a"), t("Name?", "name")),
                LinkText.tokens("what's in a Name?"));
        // U+00A0 separates tokens: pasted text carries no-break spaces between words
        assertEquals(List.of(t("films", "films"), t("of", "of"), t("O'Hara,", "o hara"), t("and", "and"),
                t("[Chéri]", "cheri")), LinkText.tokens("films of O'Hara,\u00a0and  [Chéri]"));
        assertEquals(List.of(), LinkText.tokens(" \t\n"));
    }

    private static LinkText.Token t(String text, String norm) {
        return new LinkText.Token(text, norm);
    }

    @Test
    void caseVariantsInAFixedOrderWithoutRepeats() {
        assertEquals(List.of("lord of the rings", "Lord Of The Rings", "Lord of the Rings", "Lord of the rings"),
                NameSimilarity.caseVariants("lord of the rings"));
        assertEquals(List.of("THE fall", "the fall", "THE Fall"), NameSimilarity.caseVariants("THE fall"));
        assertEquals(List.of("o'hara", "O'hara"), NameSimilarity.caseVariants("o'hara"));
        assertEquals(List.of("ß and x", "SS And X", "SS and X", "SS and x"), NameSimilarity.caseVariants("ß and x"));
        assertEquals(List.of("a", "A"), NameSimilarity.caseVariants("a"));
    }

    @Test
    void luceneEscapingCoversSpecialCharactersAndOperators() {
        Map<String, String> cases = Map.ofEntries(
                Map.entry("a+b", "a\\+b"),
                Map.entry("AND", "and"),
                Map.entry("rock AND roll", "rock and roll"),
                Map.entry("x OR y", "x or y"),
                Map.entry("NOT", "not"),
                Map.entry("ANDROID", "ANDROID"), // not a whole word
                Map.entry("OR-ville", "or\\-ville"),
                Map.entry("(1+1):2", "\\(1\\+1\\)\\:2"),
                Map.entry("say \"hi\"", "say \\\"hi\\\""),
                Map.entry("a\\b/c", "a\\\\b\\/c"),
                Map.entry("what?!", "what\\?\\!"),
                Map.entry("c++ && java || go", "c\\+\\+ \\&\\& java \\|\\| go"),
                Map.entry("~1^2*", "\\~1\\^2\\*"),
                Map.entry("{jinja}", "\\{jinja\\}"),
                Map.entry("[x]", "\\[x\\]"),
                Map.entry("héllo AND", "héllo and"),
                Map.entry("_AND_", "_AND_"), // '_' is a word character for \b
                Map.entry("AND_", "AND_"),
                Map.entry("éAND", "éAND"));
        cases.forEach((text, expected) -> assertEquals(expected, FulltextQuery.escape(text), text));
    }

    @Test
    void editDistanceCountsASwapOnceAndStopsAtItsBound() {
        assertEquals(3, NameSimilarity.editDistance("kitten", "sitting", 3));
        assertEquals(3, NameSimilarity.editDistance("kitten", "sitting", 2)); // bound + 1: too far
        assertEquals(1, NameSimilarity.editDistance("chopper", "choper", 1));
        assertEquals(0, NameSimilarity.editDistance("abc", "abc", 0));
        assertEquals(1, NameSimilarity.editDistance("abc", "abd", 0));
        assertEquals(3, NameSimilarity.editDistance("abcdef", "ab", 2)); // lengths alone rule it out
        assertEquals(2, NameSimilarity.editDistance("flaw", "lawn", 2));
        assertEquals(3, NameSimilarity.editDistance("", "abc", 3));
        assertEquals(1, NameSimilarity.editDistance("ab", "ba", 1)); // a swap is one edit
        assertEquals(1, NameSimilarity.editDistance("riener", "reiner", 1));
        assertEquals(3, NameSimilarity.editDistance("ca", "abc", 3)); // no substring is edited twice (OSA)
        // code points, not UTF-16 units: one astral character is one edit
        assertEquals(1, NameSimilarity.editDistance("a\ud83c\udfacb", "ab", 1));
    }

    @Test
    void pluralsAndPossessivesAreLookedUpAsTheNameTheyCarry() {
        assertEquals(List.of("western"), NameSimilarity.singulars("westerns"));
        assertEquals(List.of("comedy", "comedi", "comedie"), NameSimilarity.singulars("comedies"));
        assertEquals("comedy", NameSimilarity.singulars("Comedies").get(0).toLowerCase());
        assertEquals(List.of("horror thriller"), NameSimilarity.singulars("horror thrillers"));
        for (String notPlural : new String[] {"boss", "bus", "thesis", "Wayne's", "its", "1990s"}) {
            assertEquals(List.of(), NameSimilarity.singulars(notPlural), notPlural);
        }
        assertEquals("Wayne's World", NameSimilarity.withoutPossessive("Wayne's World's"));
        assertEquals("Spider-Man 2", NameSimilarity.withoutPossessive("Spider-Man 2\u2019s"));
        assertEquals(null, NameSimilarity.withoutPossessive("Wayne's World"));
        Map<String, List<IndexCandidates.SpanRef>> lookups = IndexCandidates.exactLookups(
                LinkText.tokens("What westerns did Wayne's World's writer write?"));
        assertTrue(lookups.containsKey("Western"), lookups.keySet().toString());
        assertTrue(lookups.get("Western").get(0).singular());
        assertTrue(lookups.containsKey("Wayne's World"));
        assertFalse(lookups.get("Wayne's World").stream().anyMatch(IndexCandidates.SpanRef::singular));
    }

    @Test
    void lettersWithoutADecompositionAreFolded() {
        assertEquals("jud suss", LinkText.normalize("Jud Süß"));
        assertEquals("bjorn aesir", LinkText.normalize("Bjørn Æsir"));
    }

    @Test
    void allowedEditsGrowWithTheName() {
        int[][] expected = {{1, 0}, {4, 0}, {5, 1}, {8, 1}, {9, 2}, {16, 2}, {17, 3}, {25, 4}};
        for (int[] pair : expected) {
            assertEquals(pair[1], NameSimilarity.allowedEdits(pair[0]), "length " + pair[0]);
        }
    }

    @Test
    void luceneQueryWeightsContentWordsAndFuzzesLongerOnes() {
        assertEquals("who^0.2 directed^0.2 choper~1", query("who directed Choper"));
        assertEquals("what^0.2 films^0.2 did^0.2 lee pace~1 star^0.2 in^0.2", query("what films did lee pace star in"));
        assertEquals("which^0.2 comedies~2 comedy comedi comedie \"com edies\" \"come dies\" \"comed ies\" did^0.2"
                + " woody~1 direct~1", query("which comedies did woody direct"));
        // without the KG's learned question words "wrote" is a content word (no film word list any more)
        assertEquals("who^0.2 wrote~1 schindler~2 s schindler's~2 list^0.2", query("who wrote Schindler's List"));
        assertEquals("who^0.2 directed^0.2 o hara~1 s o'hara's~2 cheri~1 bibi~1 chéri\\-bibi~2 1999~1",
                query("who directed O'Hara's Chéri-bibi (1999)?"));
        assertEquals("", query("the AND of it")); // no content word: no full-text query at all
        assertEquals("", query("what is it"));
    }

    private static String query(String question) {
        List<LinkText.Token> tokens = LinkText.tokens(question);
        return FulltextQuery.of(tokens, LinkText.content(tokens, STOP));
    }

    @Test
    void exactLookupsCoverSpansOuterPunctuationAndCaseVariants() {
        Map<String, List<IndexCandidates.SpanRef>> lookups = IndexCandidates.exactLookups(LinkText.tokens("who directed the fall?"));
        assertEquals(List.of(new IndexCandidates.SpanRef(2, 4, false, false)), lookups.get("The Fall"));
        assertEquals(List.of(new IndexCandidates.SpanRef(2, 4, true, false)), lookups.get("the fall"));
        assertEquals(List.of(new IndexCandidates.SpanRef(2, 4, true, false)), lookups.get("the fall?"));
        assertTrue(lookups.containsKey("Who Directed The Fall"));
        assertTrue(lookups.containsKey("directed the"));
        assertTrue(lookups.containsKey("Directed the"));
        assertFalse(lookups.containsKey("DIRECTED")); // ... every span, but only in its own case variants
        // spans never start or end on pure punctuation, and are at most 12 tokens long
        assertFalse(IndexCandidates.exactLookups(LinkText.tokens("a - b")).containsKey("-"));
        String fourteen = "a b c d e f g h i j k l m n";
        assertFalse(IndexCandidates.exactLookups(LinkText.tokens(fourteen)).containsKey("a b c d e f g h i j k l m"));
        assertTrue(IndexCandidates.exactLookups(LinkText.tokens(fourteen)).containsKey("a b c d e f g h i j k l"));
    }

    @Test
    void relationNamesGiveTheirLongerWords() {
        assertEquals(Set.of("directed"), LinkText.relationNameWords("directed_by"));
        assertEquals(Set.of("film", "release", "year"), LinkText.relationNameWords("film.film.release_year"));
        assertEquals(Set.of("has", "tags"), LinkText.relationNameWords("has_tags"));
        assertEquals(Set.of(), LinkText.relationNameWords("p/1999/of"));
    }

    // ------------------------------------------------------------------------ alignment, scoring, resolution

    @Test
    void alignPlacesHitsOnTheClosestSpan() {
        List<LinkText.Token> tokens = LinkText.tokens("who directed Choper or Schindlers List");
        List<HitAlignment.Hit> hits = List.of(hit("Chopper"), hit("Schindler's List"), hit("Choppers Inc"),
                hit("Chop"), hit("who directed"));
        List<Candidate> aligned = HitAlignment.align(hits, tokens);
        List<String> seen = new ArrayList<>();
        for (Candidate c : aligned) {
            seen.add(c.name + "@" + c.start + "-" + c.end + ":" + c.how + ":" + c.match);
        }
        // "Schindlers List" is "Schindler's List" without its spaces: full text, not fuzzy
        assertEquals(List.of(
                "Chopper@2-3:fuzzy:0.7857142857142857",
                "Schindler's List@4-6:fulltext:0.93",
                "who directed@0-2:fulltext:0.95"), seen);
    }

    @Test
    void squeezedNamesMatchAsFullTextWithALowerQuality() {
        List<Candidate> aligned = HitAlignment.align(List.of(hit("Spider Man")),
                LinkText.tokens("who played in spiderman"));
        assertEquals(1, aligned.size());
        assertEquals("fulltext", aligned.get(0).how);
        assertEquals(0.93, aligned.get(0).match);
    }

    @Test
    void aWordTypedWithoutItsSpaceIsLookedForAsTwoWords() {
        assertEquals(List.of("spi derman", "spid erman", "spide rman", "spider man"), LinkText.splits("spiderman"));
        assertEquals(List.of(), LinkText.splits("batman")); // too short to be two words of a name
        assertEquals(List.of(), LinkText.splits("word1000")); // a number is no name's half
        assertEquals(List.of(), LinkText.splits("pneumonoultramicroscopic"));
        assertTrue(query("who directed the first Spiderman movie").contains("\"spider man\""));
        List<LinkText.Token> tokens = LinkText.tokens("which international spiderman");
        String withEnglish = FulltextQuery.of(tokens, LinkText.content(tokens, STOP), Set.of("international")::contains);
        assertFalse(withEnglish.contains("\"inter national\"")); // a common word is not split ...
        assertTrue(withEnglish.contains("\"spider man\"")); // ... a name typed as one word is
        Set<String> english = Set.of("high", "school", "spider", "man");
        assertTrue(LinkText.typedCommonSqueezed(LinkText.tokens("highschool").get(0), english::contains));
        assertFalse(LinkText.typedCommonSqueezed(LinkText.tokens("Spiderman").get(0), english::contains));
        assertFalse(LinkText.typedCommonSqueezed(LinkText.tokens("florida").get(0), english::contains));
    }

    @Test
    void aYearSaysWhenLikeOrdinaryWords() {
        List<LinkText.Token> tokens = LinkText.tokens("who is the governor of indiana 2012");
        assertTrue(LinkText.typedYear(tokens.get(6)));
        assertFalse(LinkText.typedYear(tokens.get(5)));
        assertFalse(LinkText.typedYear(LinkText.tokens("24").get(0))); // not four digits
        assertFalse(LinkText.typedYear(LinkText.tokens("9999").get(0))); // not a year anyone asks of
        assertFalse(LinkText.typedYear(LinkText.tokens("1o00").get(0)));
    }

    @Test
    void aCommonWordTypedInLowerCaseIsThatWordNotAName() {
        Set<String> english = Set.of("singer", "movie", "the", "of", "lead");
        List<LinkText.Token> singer = LinkText.tokens("where was the lead singer of aerosmith born");
        // without the common words, "singer" is a part of a name no other name has (a surname said alone)
        assertEquals(List.of("distinctive"), HitAlignment.align(List.of(hit("Bryan Singer")), singer).stream()
                .map(c -> c.how).toList());
        assertEquals(List.of(), HitAlignment.align(List.of(hit("Bryan Singer")), singer, w -> false,
                english::contains));
        // typed as a name, it may be one
        assertEquals(1, HitAlignment.align(List.of(hit("Bryan Singer")),
                LinkText.tokens("what did Singer direct"), w -> false, english::contains).size());
        // a correctly spelt common word is not a typo of a name; a misspelt name still is
        List<LinkText.Token> movie = LinkText.tokens("who directed the first Spiderman movie");
        assertEquals(List.of(), HitAlignment.align(List.of(hit("B movie")), movie, w -> false, english::contains));
        assertEquals(List.of("fuzzy"), HitAlignment.align(List.of(hit("Spider-Men")), movie, w -> false,
                english::contains).stream().map(c -> c.how).toList());
    }

    private static HitAlignment.Hit hit(String name) {
        return new HitAlignment.Hit(null, name, name, 1, List.of());
    }

    @Test
    void scoresAreStableToTheLastBit() {
        List<LinkText.Token> tokens = LinkText.tokens("who directed The Godfather Part II");
        boolean[] content = LinkText.content(tokens, STOP);
        Set<String> cues = LinkText.stems(tokens.stream().map(LinkText.Token::norm).toList());
        assertEquals(1.1023442919665085, LinkScoring.score(candidate("The Godfather Part II", 2, 6, 1.0, "directed_by"),
                tokens, content, true, cues));
        assertEquals(0.8038137226067062, LinkScoring.score(candidate("The Godfather", 2, 4, 1.0), tokens, content, true, cues));
        assertEquals(0.6646742862204309, LinkScoring.score(candidate("godfather", 3, 4, 0.96, "has_tags"),
                tokens, content, true, cues));
        assertEquals(0.11601580743928616, LinkScoring.score(candidate("Directed", 1, 2, 1.0), tokens, content, true, cues));
    }

    @Test
    void resolutionKeepsTwinsAndDropsOverlapsAndWeakLeftovers() {
        List<LinkText.Token> tokens = LinkText.tokens("films with keanu reeves");
        boolean[] content = LinkText.content(tokens, STOP);
        Set<String> cues = LinkText.stems(tokens.stream().map(LinkText.Token::norm).toList());
        List<Candidate> candidates = List.of(
                candidate("K", "Keanu Reeves", 2, 4, 0.99, 10, "starred_actors"),
                candidate("k", "keanu reeves", 2, 4, 1.0, 2, "has_tags"),
                candidate("r", "Reeves", 3, 4, 0.99, 1),
                candidate("w", "With", 1, 2, 0.99, 1));
        double[] expected = {0.8483153812456475, 0.856884223480452, 0.5450111976398271, 0.09019605419909535};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], LinkScoring.score(candidates.get(i), tokens, content, false, cues));
        }
        List<EntityLinker.Link> links = SpanResolver.resolve(candidates, tokens, 3);
        assertEquals(List.of("k|keanu reeves|0.8569|keanu reeves", "K|Keanu Reeves|0.8483|keanu reeves"),
                links.stream().map(l -> l.id() + "|" + l.name() + "|" + l.score() + "|" + l.span()).toList());
        // the tag and the person share one span, so one place
        assertEquals(2, SpanResolver.resolve(candidates, tokens, 1).size());
    }

    @Test
    void resolutionBreaksTiesByLengthDegreeThenName() {
        List<LinkText.Token> tokens = LinkText.tokens("x y");
        Candidate b = candidate("b", "B", 0, 1, 1.0, 5);
        Candidate a = candidate("a", "A", 0, 1, 1.0, 5);
        Candidate busy = candidate("c", "C", 0, 1, 1.0, 9);
        for (Candidate c : List.of(a, b, busy)) {
            c.score = 0.5;
        }
        assertEquals("C", SpanResolver.resolve(List.of(a, b, busy), tokens, 1).get(0).name());
        assertEquals("A", SpanResolver.resolve(List.of(b, a), tokens, 1).get(0).name());
        // equal after rounding to 3 decimals counts as a tie
        a.score = 0.50001;
        b.score = 0.5004;
        assertEquals("A", SpanResolver.resolve(List.of(b, a), tokens, 1).get(0).name());
        b.score = 0.5006;
        assertEquals("B", SpanResolver.resolve(List.of(b, a), tokens, 1).get(0).name());
        // reported scores are capped at 1 and rounded to 4 decimals
        busy.score = 1.1;
        assertEquals(1.0, SpanResolver.resolve(List.of(busy), tokens, 1).get(0).score());
        // below MIN_SCORE nothing is returned; below SECONDARY_RATIO of the best, nothing more
        busy.score = 0.29;
        assertEquals(List.of(), SpanResolver.resolve(List.of(busy), tokens, 3));
        Candidate first = candidate("p", "P", 0, 1, 1.0, 1);
        Candidate weak = candidate("q", "Q", 1, 2, 1.0, 1);
        first.score = 0.8;
        weak.score = 0.59;
        assertEquals(1, SpanResolver.resolve(List.of(first, weak), tokens, 3).size());
        weak.score = 0.61;
        assertEquals(2, SpanResolver.resolve(List.of(first, weak), tokens, 3).size());
        // a claim keeps every entity above MIN_SCORE (secondaryRatio 0)
        weak.score = 0.31;
        assertEquals(1, SpanResolver.resolve(List.of(first, weak), tokens, 3).size());
        assertEquals(2, SpanResolver.resolve(List.of(first, weak), tokens, 3, 0.0).size());
        // a literal value said exactly stays beside a stronger name, however short it is; a fuzzy one does not
        List<LinkText.Token> threeWords = LinkText.tokens("x y 1987");
        Candidate year = candidate("1987", "1987", 2, 3, 1.0, 1);
        year.score = 0.4;
        List<EntityLinker.Link> links = SpanResolver.resolve(List.of(first, weak, year), threeWords, 3);
        assertEquals(List.of("P", "1987"), links.stream().map(EntityLinker.Link::name).toList());
        Candidate fuzzyYear = new Candidate(null, "1988", "1988", 2, 3, "fulltext", 0.8, 1, List.of());
        fuzzyYear.score = 0.4;
        assertEquals(1, SpanResolver.resolve(List.of(first, fuzzyYear), threeWords, 3).size());
    }

    private static Candidate candidate(String name, int start, int end, double match, String... types) {
        return candidate(name, name, start, end, match, 3, types);
    }

    private static Candidate candidate(String id, String name, int start, int end, double match, int degree,
                                                    String... types) {
        return new Candidate(null, id, name, start, end, "exact", match, degree, List.of(types));
    }

    // ---------------------------------------------------------------------------------- text rules

    @Test
    void aVeryLongQuestionMakesABoundedFullTextQuery() {
        StringBuilder question = new StringBuilder("who directed");
        for (int i = 0; i < 1100; i++) {
            question.append(" word").append(i);
        }
        List<LinkText.Token> tokens = LinkText.tokens(question + " Kismet");
        boolean[] content = LinkText.content(tokens, STOP);
        String query = FulltextQuery.of(tokens, content);
        assertEquals(FulltextQuery.MAX_QUERY_TERMS, query.split(" ").length);
    }

    @Test
    void whitespaceCapitalsRoundingAndNameOrder() {
        assertEquals("a b", LinkText.strip("\u00a0\u2007a b\u0085 "));
        assertEquals("Fall", LinkText.stripPunct("\"Fall?!"));
        assertEquals("Fall?!", LinkText.stripPunctStart("(Fall?!"));
        assertTrue(LinkText.isAllCapitals("WHO DIRECTED 1999?"));
        assertFalse(LinkText.isAllCapitals("WHO DIRECTED Kismet"));
        assertFalse(LinkText.isAllCapitals("1999?"));
        // half-even on the exact binary value
        assertEquals(0.001, SpanResolver.round(0.0005, 3));
        assertEquals(0.002, SpanResolver.round(0.0015, 3));
        assertEquals(2.67, SpanResolver.round(2.675, 2));
        assertEquals(0.1235, SpanResolver.round(0.1234567, 4));
        assertTrue(SpanResolver.BY_CODE_POINT.compare("\uffff", "\ud83c\udfac") < 0); // code point order, not UTF-16 order
        assertTrue(SpanResolver.BY_CODE_POINT.compare("ab", "abc") < 0);
    }

    @Test
    void bracketsAreFoundAndRemovedLikeThePythonSide() {
        assertEquals(List.of("Lee Pace", "1999"), QuestionText.bracketed("films of [Lee Pace] in [1999]? [Lee Pace]"));
        assertEquals(List.of(), QuestionText.bracketed("no brackets [ ] here"));
        assertEquals(List.of("Heat"), QuestionText.bracketed("[\u00a0Heat ]"));
        // Same string as kgqa.retrieve.subgraphrag.question_text: brackets to spaces, whitespace collapsed.
        assertEquals("who directed Kismet ?", QuestionText.withoutBrackets("who  directed [Kismet]?"));
        assertEquals("a b", QuestionText.withoutBrackets(" [a]\u00a0[b] "));
    }

    @Test
    void theTopicIsMaskedLikeThePythonSide() {
        // Same strings as kgqa.core.text.mask_topic (tests/test_gsr.py::test_masking).
        assertEquals("who directed it ?", QuestionText.maskTopic("who  directed [Kismet] ?", List.of("x"), "it"));
        assertEquals("films of it with it", QuestionText.maskTopic("films of [A] with [B]", null, "it"));
        assertEquals("who wrote it with kismet",
                QuestionText.maskTopic("who wrote kismet with kismet", List.of("nothere", "Kismet"), "it"));
        assertEquals("no span here", QuestionText.maskTopic("no  span here", List.of("", "Heat"), "it"));
        assertEquals("a $1 b", QuestionText.maskTopic("a [x] b", List.of(), "$1"));
    }

    @Test
    void explicitNamesAreSplitIntoPhraseSafeWords() {
        assertEquals(List.of("Schindler's", "List"), IndexCandidates.words("Schindler's List!"));
        assertEquals(List.of("Amélie", "bd", "r"), IndexCandidates.words("[Amélie] bd-r"));
        assertEquals(List.of(), IndexCandidates.words("?! \"*\""));
    }
}
