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
 * The graph-free pieces of the linker. Expected values were produced by the Python linker it was ported
 * from (retrieve/linking.py), so each assertion is also a parity check.
 */
class EntityLinkerTest {

    /** The stop words, relation words of a KG with directed_by, starred_actors and has_tags, and what its questions ask with. */
    private static final Set<String> STOP = stop("directed", "starred", "actors", "tags", "films", "star");

    private static Set<String> stop(String... relationWords) {
        Set<String> stop = new HashSet<>(EntityLinker.STOPWORDS);
        stop.addAll(List.of(relationWords));
        return stop;
    }

    // ------------------------------------------------------------------------------ text primitives

    @Test
    void normaliseFoldsCaseAccentsCompatibilityFormsAndPunctuation() {
        assertEquals("amelie", EntityLinker.normalize("Amélie"));
        assertEquals("schindler s list", EntityLinker.normalize("Schindler's List"));
        assertEquals("bd r", EntityLinker.normalize("bd-r"));
        assertEquals("monsters inc", EntityLinker.normalize("Monsters, Inc."));
        assertEquals("film 2", EntityLinker.normalize("\ufb01lm \u00b2")); // ligature and superscript (NFKD)
        assertEquals("foo bar", EntityLinker.normalize("foo_bar"));
        assertEquals("ca va", EntityLinker.normalize("Ça  va?"));
        assertEquals("istanbul", EntityLinker.normalize("İstanbul"));
        assertEquals("strasse", EntityLinker.normalize("Straße")); // no decomposition: folded as typed in Latin
        assertEquals("oedipe", EntityLinker.normalize("Œdipe"));
        assertEquals("日本 映画", EntityLinker.normalize("日本 映画"));
        assertEquals("\u03bf\u03b4\u03c5\u03c3\u03c3\u03b5\u03b1\u03c2", EntityLinker.normalize("ΟΔΥΣΣΕΑΣ")); // final sigma
        assertEquals("x y", EntityLinker.normalize("x\u00a0y"));
        assertEquals("ab", EntityLinker.normalize("a\u0301\u0327b")); // combining marks of any class dropped
        assertEquals("", EntityLinker.normalize("?!-"));
    }

    @Test
    void tokensSplitOnPythonWhitespaceAndKeepAccentsAndApostrophesAsTyped() {
        assertEquals(List.of(t("Who", "who"), t("directed", "directed"), t("Amélie?", "amelie")),
                EntityLinker.tokens("  Who directed  Amélie?"));
        assertEquals(List.of(t("what's", "what s"), t("in", "in"), t("a", "a"), t("Name?", "name")),
                EntityLinker.tokens("what's in a Name?"));
        // U+00A0 separates tokens, as str.split() does
        assertEquals(List.of(t("films", "films"), t("of", "of"), t("O'Hara,", "o hara"), t("and", "and"),
                t("[Chéri]", "cheri")), EntityLinker.tokens("films of O'Hara,\u00a0and  [Chéri]"));
        assertEquals(List.of(), EntityLinker.tokens(" \t\n"));
    }

    private static EntityLinker.Token t(String text, String norm) {
        return new EntityLinker.Token(text, norm);
    }

    @Test
    void caseVariantsInPythonsOrderWithoutRepeats() {
        assertEquals(List.of("lord of the rings", "Lord Of The Rings", "Lord of the Rings", "Lord of the rings"),
                EntityLinker.caseVariants("lord of the rings"));
        assertEquals(List.of("THE fall", "the fall", "THE Fall"), EntityLinker.caseVariants("THE fall"));
        assertEquals(List.of("o'hara", "O'hara"), EntityLinker.caseVariants("o'hara"));
        assertEquals(List.of("ß and x", "SS And X", "SS and X", "SS and x"), EntityLinker.caseVariants("ß and x"));
        assertEquals(List.of("a", "A"), EntityLinker.caseVariants("a"));
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
        cases.forEach((text, expected) -> assertEquals(expected, EntityLinker.escapeLucene(text), text));
    }

    @Test
    void editDistanceCountsASwapOnceAndStopsAtItsBound() {
        assertEquals(3, EntityLinker.editDistance("kitten", "sitting", 3));
        assertEquals(3, EntityLinker.editDistance("kitten", "sitting", 2)); // bound + 1: too far
        assertEquals(1, EntityLinker.editDistance("chopper", "choper", 1));
        assertEquals(0, EntityLinker.editDistance("abc", "abc", 0));
        assertEquals(1, EntityLinker.editDistance("abc", "abd", 0));
        assertEquals(3, EntityLinker.editDistance("abcdef", "ab", 2)); // lengths alone rule it out
        assertEquals(2, EntityLinker.editDistance("flaw", "lawn", 2));
        assertEquals(3, EntityLinker.editDistance("", "abc", 3));
        assertEquals(1, EntityLinker.editDistance("ab", "ba", 1)); // a swap is one edit
        assertEquals(1, EntityLinker.editDistance("riener", "reiner", 1));
        assertEquals(3, EntityLinker.editDistance("ca", "abc", 3)); // no substring is edited twice (OSA)
        // code points, not UTF-16 units: one astral character is one edit
        assertEquals(1, EntityLinker.editDistance("a\ud83c\udfacb", "ab", 1));
    }

    @Test
    void pluralsAndPossessivesAreLookedUpAsTheNameTheyCarry() {
        assertEquals(List.of("western"), EntityLinker.singulars("westerns"));
        assertEquals(List.of("comedy", "comedi", "comedie"), EntityLinker.singulars("comedies"));
        assertEquals("comedy", EntityLinker.singulars("Comedies").get(0).toLowerCase());
        assertEquals(List.of("horror thriller"), EntityLinker.singulars("horror thrillers"));
        for (String notPlural : new String[] {"boss", "bus", "thesis", "Wayne's", "its", "1990s"}) {
            assertEquals(List.of(), EntityLinker.singulars(notPlural), notPlural);
        }
        assertEquals("Wayne's World", EntityLinker.withoutPossessive("Wayne's World's"));
        assertEquals("Spider-Man 2", EntityLinker.withoutPossessive("Spider-Man 2\u2019s"));
        assertEquals(null, EntityLinker.withoutPossessive("Wayne's World"));
        Map<String, List<EntityLinker.SpanRef>> lookups = EntityLinker.exactLookups(
                EntityLinker.tokens("What westerns did Wayne's World's writer write?"));
        assertTrue(lookups.containsKey("Western"), lookups.keySet().toString());
        assertTrue(lookups.get("Western").get(0).singular());
        assertTrue(lookups.containsKey("Wayne's World"));
        assertFalse(lookups.get("Wayne's World").stream().anyMatch(EntityLinker.SpanRef::singular));
    }

    @Test
    void lettersWithoutADecompositionAreFolded() {
        assertEquals("jud suss", EntityLinker.normalize("Jud Süß"));
        assertEquals("bjorn aesir", EntityLinker.normalize("Bjørn Æsir"));
    }

    @Test
    void allowedEditsGrowWithTheName() {
        int[][] expected = {{1, 0}, {4, 0}, {5, 1}, {8, 1}, {9, 2}, {16, 2}, {17, 3}, {25, 4}};
        for (int[] pair : expected) {
            assertEquals(pair[1], EntityLinker.allowedEdits(pair[0]), "length " + pair[0]);
        }
    }

    @Test
    void luceneQueryWeightsContentWordsAndFuzzesLongerOnes() {
        assertEquals("who^0.2 directed^0.2 choper~1", query("who directed Choper"));
        assertEquals("what^0.2 films^0.2 did^0.2 lee pace~1 star^0.2 in^0.2", query("what films did lee pace star in"));
        // without the KG's learned question words "wrote" is a content word (no film word list any more)
        assertEquals("who^0.2 wrote~1 schindler~2 s schindler's~2 list^0.2", query("who wrote Schindler's List"));
        assertEquals("who^0.2 directed^0.2 o hara~1 s o'hara's~2 cheri~1 bibi~1 chéri\\-bibi~2 1999~1",
                query("who directed O'Hara's Chéri-bibi (1999)?"));
        assertEquals("", query("the AND of it")); // no content word: no full-text query at all
        assertEquals("", query("what is it"));
    }

    private static String query(String question) {
        List<EntityLinker.Token> tokens = EntityLinker.tokens(question);
        return EntityLinker.luceneQuery(tokens, EntityLinker.content(tokens, STOP));
    }

    @Test
    void exactLookupsCoverSpansOuterPunctuationAndCaseVariants() {
        Map<String, List<EntityLinker.SpanRef>> lookups = EntityLinker.exactLookups(EntityLinker.tokens("who directed the fall?"));
        assertEquals(List.of(new EntityLinker.SpanRef(2, 4, false, false)), lookups.get("The Fall"));
        assertEquals(List.of(new EntityLinker.SpanRef(2, 4, true, false)), lookups.get("the fall"));
        assertEquals(List.of(new EntityLinker.SpanRef(2, 4, true, false)), lookups.get("the fall?"));
        assertTrue(lookups.containsKey("Who Directed The Fall"));
        assertTrue(lookups.containsKey("directed the"));
        assertTrue(lookups.containsKey("Directed the"));
        assertFalse(lookups.containsKey("DIRECTED")); // ... every span, but only in its own case variants
        // spans never start or end on pure punctuation, and are at most 12 tokens long
        assertFalse(EntityLinker.exactLookups(EntityLinker.tokens("a - b")).containsKey("-"));
        String fourteen = "a b c d e f g h i j k l m n";
        assertFalse(EntityLinker.exactLookups(EntityLinker.tokens(fourteen)).containsKey("a b c d e f g h i j k l m"));
        assertTrue(EntityLinker.exactLookups(EntityLinker.tokens(fourteen)).containsKey("a b c d e f g h i j k l"));
    }

    @Test
    void relationNamesGiveTheirLongerWords() {
        assertEquals(Set.of("directed"), EntityLinker.relationNameWords("directed_by"));
        assertEquals(Set.of("film", "release", "year"), EntityLinker.relationNameWords("film.film.release_year"));
        assertEquals(Set.of("has", "tags"), EntityLinker.relationNameWords("has_tags"));
        assertEquals(Set.of(), EntityLinker.relationNameWords("p/1999/of"));
    }

    // ------------------------------------------------------------------------ alignment, scoring, resolution

    @Test
    void alignPlacesHitsOnTheClosestSpan() {
        List<EntityLinker.Token> tokens = EntityLinker.tokens("who directed Choper or Schindlers List");
        List<EntityLinker.Hit> hits = List.of(hit("Chopper"), hit("Schindler's List"), hit("Choppers Inc"),
                hit("Chop"), hit("who directed"));
        List<EntityLinker.Candidate> aligned = EntityLinker.align(hits, tokens);
        List<String> seen = new ArrayList<>();
        for (EntityLinker.Candidate c : aligned) {
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
        List<EntityLinker.Candidate> aligned = EntityLinker.align(List.of(hit("Spider Man")),
                EntityLinker.tokens("who played in spiderman"));
        assertEquals(1, aligned.size());
        assertEquals("fulltext", aligned.get(0).how);
        assertEquals(0.93, aligned.get(0).match);
    }

    @Test
    void aCommonWordTypedInLowerCaseIsThatWordNotAName() {
        Set<String> english = Set.of("singer", "movie", "the", "of", "lead");
        List<EntityLinker.Token> singer = EntityLinker.tokens("where was the lead singer of aerosmith born");
        // without the common words, "singer" is a surname said alone
        assertEquals(List.of("partial"), EntityLinker.align(List.of(hit("Bryan Singer")), singer).stream()
                .map(c -> c.how).toList());
        assertEquals(List.of(), EntityLinker.align(List.of(hit("Bryan Singer")), singer, w -> false,
                english::contains));
        // typed as a name, it may be one
        assertEquals(1, EntityLinker.align(List.of(hit("Bryan Singer")),
                EntityLinker.tokens("what did Singer direct"), w -> false, english::contains).size());
        // a correctly spelt common word is not a typo of a name; a misspelt name still is
        List<EntityLinker.Token> movie = EntityLinker.tokens("who directed the first Spiderman movie");
        assertEquals(List.of(), EntityLinker.align(List.of(hit("B movie")), movie, w -> false, english::contains));
        assertEquals(List.of("fuzzy"), EntityLinker.align(List.of(hit("Spider-Men")), movie, w -> false,
                english::contains).stream().map(c -> c.how).toList());
    }

    private static EntityLinker.Hit hit(String name) {
        return new EntityLinker.Hit(null, name, name, 1, List.of());
    }

    @Test
    void scoresAreThoseOfThePythonLinkerToTheLastBit() {
        List<EntityLinker.Token> tokens = EntityLinker.tokens("who directed The Godfather Part II");
        boolean[] content = EntityLinker.content(tokens, STOP);
        Set<String> cues = EntityLinker.stems(tokens.stream().map(EntityLinker.Token::norm).toList());
        assertEquals(1.1023442919665085, EntityLinker.score(candidate("The Godfather Part II", 2, 6, 1.0, "directed_by"),
                tokens, content, true, cues));
        assertEquals(0.8038137226067062, EntityLinker.score(candidate("The Godfather", 2, 4, 1.0), tokens, content, true, cues));
        assertEquals(0.6646742862204309, EntityLinker.score(candidate("godfather", 3, 4, 0.96, "has_tags"),
                tokens, content, true, cues));
        assertEquals(0.11601580743928616, EntityLinker.score(candidate("Directed", 1, 2, 1.0), tokens, content, true, cues));
    }

    @Test
    void resolutionKeepsTwinsAndDropsOverlapsAndWeakLeftovers() {
        List<EntityLinker.Token> tokens = EntityLinker.tokens("films with keanu reeves");
        boolean[] content = EntityLinker.content(tokens, STOP);
        Set<String> cues = EntityLinker.stems(tokens.stream().map(EntityLinker.Token::norm).toList());
        List<EntityLinker.Candidate> candidates = List.of(
                candidate("K", "Keanu Reeves", 2, 4, 0.99, 10, "starred_actors"),
                candidate("k", "keanu reeves", 2, 4, 1.0, 2, "has_tags"),
                candidate("r", "Reeves", 3, 4, 0.99, 1),
                candidate("w", "With", 1, 2, 0.99, 1));
        double[] expected = {0.8483153812456475, 0.856884223480452, 0.5450111976398271, 0.09019605419909535};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], EntityLinker.score(candidates.get(i), tokens, content, false, cues));
        }
        List<EntityLinker.Link> links = EntityLinker.resolve(candidates, tokens, 3);
        assertEquals(List.of("k|keanu reeves|0.8569|keanu reeves", "K|Keanu Reeves|0.8483|keanu reeves"),
                links.stream().map(l -> l.id() + "|" + l.name() + "|" + l.score() + "|" + l.span()).toList());
        // the tag and the person share one span, so one place
        assertEquals(2, EntityLinker.resolve(candidates, tokens, 1).size());
    }

    @Test
    void resolutionBreaksTiesByLengthDegreeThenName() {
        List<EntityLinker.Token> tokens = EntityLinker.tokens("x y");
        EntityLinker.Candidate b = candidate("b", "B", 0, 1, 1.0, 5);
        EntityLinker.Candidate a = candidate("a", "A", 0, 1, 1.0, 5);
        EntityLinker.Candidate busy = candidate("c", "C", 0, 1, 1.0, 9);
        for (EntityLinker.Candidate c : List.of(a, b, busy)) {
            c.score = 0.5;
        }
        assertEquals("C", EntityLinker.resolve(List.of(a, b, busy), tokens, 1).get(0).name());
        assertEquals("A", EntityLinker.resolve(List.of(b, a), tokens, 1).get(0).name());
        // equal after rounding to 3 decimals counts as a tie
        a.score = 0.50001;
        b.score = 0.5004;
        assertEquals("A", EntityLinker.resolve(List.of(b, a), tokens, 1).get(0).name());
        b.score = 0.5006;
        assertEquals("B", EntityLinker.resolve(List.of(b, a), tokens, 1).get(0).name());
        // reported scores are capped at 1 and rounded to 4 decimals
        busy.score = 1.1;
        assertEquals(1.0, EntityLinker.resolve(List.of(busy), tokens, 1).get(0).score());
        // below MIN_SCORE nothing is returned; below SECONDARY_RATIO of the best, nothing more
        busy.score = 0.29;
        assertEquals(List.of(), EntityLinker.resolve(List.of(busy), tokens, 3));
        EntityLinker.Candidate first = candidate("p", "P", 0, 1, 1.0, 1);
        EntityLinker.Candidate weak = candidate("q", "Q", 1, 2, 1.0, 1);
        first.score = 0.8;
        weak.score = 0.59;
        assertEquals(1, EntityLinker.resolve(List.of(first, weak), tokens, 3).size());
        weak.score = 0.61;
        assertEquals(2, EntityLinker.resolve(List.of(first, weak), tokens, 3).size());
        // a claim keeps every entity above MIN_SCORE (secondaryRatio 0)
        weak.score = 0.31;
        assertEquals(1, EntityLinker.resolve(List.of(first, weak), tokens, 3).size());
        assertEquals(2, EntityLinker.resolve(List.of(first, weak), tokens, 3, 0.0).size());
        // a literal value said exactly stays beside a stronger name, however short it is; a fuzzy one does not
        List<EntityLinker.Token> threeWords = EntityLinker.tokens("x y 1987");
        EntityLinker.Candidate year = candidate("1987", "1987", 2, 3, 1.0, 1);
        year.score = 0.4;
        List<EntityLinker.Link> links = EntityLinker.resolve(List.of(first, weak, year), threeWords, 3);
        assertEquals(List.of("P", "1987"), links.stream().map(EntityLinker.Link::name).toList());
        EntityLinker.Candidate fuzzyYear = new EntityLinker.Candidate(null, "1988", "1988", 2, 3, "fulltext", 0.8, 1, List.of());
        fuzzyYear.score = 0.4;
        assertEquals(1, EntityLinker.resolve(List.of(first, fuzzyYear), threeWords, 3).size());
    }

    private static EntityLinker.Candidate candidate(String name, int start, int end, double match, String... types) {
        return candidate(name, name, start, end, match, 3, types);
    }

    private static EntityLinker.Candidate candidate(String id, String name, int start, int end, double match, int degree,
                                                    String... types) {
        return new EntityLinker.Candidate(null, id, name, start, end, "exact", match, degree, List.of(types));
    }

    // ------------------------------------------------------------------------------- Python semantics

    @Test
    void aVeryLongQuestionMakesABoundedFullTextQuery() {
        StringBuilder question = new StringBuilder("who directed");
        for (int i = 0; i < 1100; i++) {
            question.append(" word").append(i);
        }
        List<EntityLinker.Token> tokens = EntityLinker.tokens(question + " Kismet");
        boolean[] content = EntityLinker.content(tokens, STOP);
        String query = EntityLinker.luceneQuery(tokens, content);
        assertEquals(EntityLinker.MAX_QUERY_TERMS, query.split(" ").length);
    }

    @Test
    void pythonStringSemantics() {
        assertEquals("a b", PyText.strip("\u00a0\u2007a b\u0085 "));
        assertEquals("Fall", PyText.strip("\"Fall?!", EntityLinker.OUTER_PUNCT));
        assertEquals("Fall?!", PyText.lstrip("(Fall?!", EntityLinker.OUTER_PUNCT));
        assertTrue(PyText.isUpper("WHO DIRECTED 1999?"));
        assertFalse(PyText.isUpper("WHO DIRECTED Kismet"));
        assertFalse(PyText.isUpper("1999?"));
        // CPython's round: half-even on the exact binary value
        assertEquals(0.001, PyText.round(0.0005, 3));
        assertEquals(0.002, PyText.round(0.0015, 3));
        assertEquals(2.67, PyText.round(2.675, 2));
        assertEquals(0.1235, PyText.round(0.1234567, 4));
        assertTrue(PyText.compare("\uffff", "\ud83c\udfac") < 0); // code point order, not UTF-16 order
        assertTrue(PyText.compare("ab", "abc") < 0);
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
        assertEquals(List.of("Schindler's", "List"), EntityLinker.words("Schindler's List!"));
        assertEquals(List.of("Amélie", "bd", "r"), EntityLinker.words("[Amélie] bd-r"));
        assertEquals(List.of(), EntityLinker.words("?! \"*\""));
    }
}
