package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Choosing among scored candidates: order, overlaps, twins and the leftovers that stay. */
class SpanResolverTest {

    private static final List<LinkText.Token> TOKENS = LinkText.tokens("a b \"c\"? d e");

    private static Candidate scored(String id, String name, int start, int end, String how, double score, int degree) {
        Candidate c = new Candidate(null, id, name, start, end, how, 1.0, degree, List.of());
        c.score = score;
        return c;
    }

    private static List<String> ids(List<EntityLinker.Link> links) {
        return links.stream().map(EntityLinker.Link::id).toList();
    }

    @Test
    void overlappingSpansAndRepeatedEntitiesGiveWayToTheBetterOne() {
        List<Candidate> candidates = List.of(scored("long", "A B", 0, 2, "exact", 0.8, 1),
                scored("inner", "B", 1, 2, "exact", 0.9, 1), scored("inner", "D", 3, 4, "exact", 0.85, 1),
                scored("apart", "E", 4, 5, "exact", 0.7, 1));
        assertEquals(List.of("inner", "apart"), ids(SpanResolver.resolve(candidates, TOKENS, 3)));
        assertEquals(List.of("inner"), ids(SpanResolver.resolve(candidates, TOKENS, 1)));
    }

    @Test
    void namesTiedOnEveryOtherKeyGoInCodePointOrder() {
        // U+FFFF before U+1F3AC by code point, the other way round by UTF-16 unit; both normalise to "z": twins
        Candidate bmp = scored("bmp", "Z\uffff", 0, 1, "exact", 0.5, 1);
        Candidate astral = scored("astral", "Z\ud83c\udfac", 0, 1, "exact", 0.5, 1);
        assertTrue("Z\ud83c\udfac".compareTo("Z\uffff") < 0);
        assertEquals(List.of("bmp", "astral"), ids(SpanResolver.resolve(List.of(astral, bmp), TOKENS, 1)));
    }

    @Test
    void aSpanHoldsAtMostMaxTwinsEntitiesOfOneName() {
        List<Candidate> twins = new ArrayList<>();
        for (int i = 0; i < SpanResolver.MAX_TWINS + 2; i++) {
            twins.add(scored("t" + i, i % 2 == 0 ? "Ringo Lam" : "ringo lam", 0, 2, "exact", 0.9 - i * 0.001, 1));
        }
        assertEquals(SpanResolver.MAX_TWINS, SpanResolver.resolve(twins, TOKENS, 1).size());
        // a namesake below TWIN_RATIO of the chosen one is no twin: it overlaps, so it goes
        Candidate weak = scored("weak", "Ringo Lam", 0, 2, "exact", 0.9 * LinkScoring.TWIN_RATIO - 0.01, 1);
        assertEquals(List.of("t0"), ids(SpanResolver.resolve(List.of(twins.get(0), weak), TOKENS, 3)));
    }

    @Test
    void aSharedValueOrATypedNameStaysBesideAStrongerEntity() {
        Candidate first = scored("p", "P", 0, 1, "exact", 0.9, 1);
        double weak = 0.9 * LinkScoring.SECONDARY_RATIO - 0.1;
        Candidate genre = scored("horror", "Horror", 1, 2, "singular", weak, SpanResolver.SHARED_VALUE_DEGREE);
        Candidate rare = scored("rare", "Rare", 1, 2, "singular", weak, SpanResolver.SHARED_VALUE_DEGREE - 1);
        assertEquals(List.of("p", "horror"), ids(SpanResolver.resolve(List.of(first, genre), TOKENS, 3)));
        assertEquals(List.of("p"), ids(SpanResolver.resolve(List.of(first, rare), TOKENS, 3)));

        Candidate typed = new Candidate(null, "typed", "Bullitt", 4, 5, "fuzzy", LinkScoring.TYPED_NAME_MATCH, 1, List.of());
        typed.score = weak;
        typed.capitalised = true;
        Candidate loose = new Candidate(null, "loose", "Bulit", 4, 5, "fuzzy", LinkScoring.TYPED_NAME_MATCH - 0.01, 1,
                List.of());
        loose.score = weak;
        loose.capitalised = true;
        assertEquals(List.of("p", "typed"), ids(SpanResolver.resolve(List.of(first, typed), TOKENS, 3)));
        assertEquals(List.of("p"), ids(SpanResolver.resolve(List.of(first, loose), TOKENS, 3)));
    }

    @Test
    void aNameOfSeveralWordsMisspeltInALowerCaseQuestionStaysBesideAStrongerEntity() {
        String question = "what films did leonardo dicaprio and kate winslett star in together";
        List<LinkText.Token> tokens = LinkText.tokens(question);
        boolean[] content = LinkText.content(tokens, LinkText.STOPWORDS);
        boolean hasCase = LinkText.hasCase(tokens, question);
        Candidate first = new Candidate(null, "leo", "Leonardo DiCaprio", 3, 5, "fulltext", 1.0, 1, List.of());
        Candidate second = new Candidate(null, "kate", "Kate Winslet", 6, 8, "fuzzy", LinkScoring.TYPED_NAME_MATCH,
                1, List.of());
        Candidate word = new Candidate(null, "star", "Star", 8, 9, "exact", 1.0, 1, List.of());
        for (Candidate c : List.of(first, second, word)) {
            LinkScoring.score(c, tokens, content, hasCase, Set.of());
        }
        assertTrue(second.spelledWithoutCase);
        assertTrue(!word.spelledWithoutCase, "one word is no name by its spelling alone");
        // below the ratio of the best, as a misspelt name scores
        second.score = first.score * LinkScoring.SECONDARY_RATIO - 0.05;
        word.score = second.score;
        assertEquals(List.of("leo", "kate"), ids(SpanResolver.resolve(List.of(first, second, word), tokens, 3)));

        // the same words in a question that uses case, typed in lower case: the case says they are no name
        String cased = "What films did Leonardo DiCaprio and kate winslett star in together";
        List<LinkText.Token> casedTokens = LinkText.tokens(cased);
        LinkScoring.score(second, casedTokens, content, LinkText.hasCase(casedTokens, cased), Set.of());
        assertTrue(!second.spelledWithoutCase && !second.capitalised);
    }

    @Test
    void theSpanIsReportedAsTypedWithoutOuterPunctuation() {
        List<EntityLinker.Link> links = SpanResolver.resolve(List.of(scored("c", "C", 2, 3, "exact", 0.5, 1)), TOKENS, 1);
        assertEquals("c", links.get(0).span());
        assertEquals("c", links.get(0).id());
    }

    @Test
    void roundingIsHalfEvenOnTheExactBinaryValue() {
        // 1.0005 is stored just below: it rounds down, where rounding 1000.5 (1.0005 * 1000) would go up
        assertEquals(1.0, SpanResolver.round(1.0005, 3));
        assertEquals(1001, Math.round(1.0005 * 1000));
        assertEquals(0.125, SpanResolver.round(0.125, 3));
        assertEquals(0.12, SpanResolver.round(0.125, 2)); // exactly half: to even
        assertEquals(Double.NaN, SpanResolver.round(Double.NaN, 3));
    }

    @Test
    void theWordsAWhatOrWhichAsksForGoBehindTheNameAndStayLinked() {
        List<LinkText.Token> tokens = LinkText.tokens("what airport is closest to downtown toronto");
        Candidate airport = scored("airport", "Airport", 1, 2, "exact", 0.67, 1);
        Candidate toronto = scored("toronto", "Toronto", 6, 7, "exact", 0.57, 1);
        assertEquals(List.of("toronto", "airport"),
                ids(SpanResolver.resolve(List.of(airport, toronto), tokens, 3)));
        // "kind of" and "are the" lie between the question word and what it asks for
        assertEquals(3, LinkScoring.askedKindStart(LinkText.tokens("what kind of language do irish speak")));
        assertEquals(3, LinkScoring.askedKindStart(LinkText.tokens("what are the airports in chicago")));
        assertEquals(2, LinkScoring.askedKindStart(LinkText.tokens("so which companies began in chicago")));
        assertEquals(-1, LinkScoring.askedKindStart(LinkText.tokens("who is the president of peru")));
        // alone, it is the topic ("what airport"); typed as a name, it is what the user named ("Which Beatles")
        assertEquals(List.of("airport"), ids(SpanResolver.resolve(List.of(airport), tokens, 3)));
        airport.capitalised = true;
        assertEquals(List.of("airport", "toronto"),
                ids(SpanResolver.resolve(List.of(airport, toronto), tokens, 3)));
        // anywhere else in the question the score decides
        List<LinkText.Token> later = LinkText.tokens("toronto has what airport");
        Candidate laterAirport = scored("airport", "Airport", 3, 4, "exact", 0.67, 1);
        Candidate first = scored("toronto", "Toronto", 0, 1, "exact", 0.57, 1);
        assertEquals(List.of("airport", "toronto"),
                ids(SpanResolver.resolve(List.of(laterAirport, first), later, 3)));
    }

    /** The ids {@code question} links, of these candidates, at most three spans. */
    private static List<String> linked(String question, Candidate... candidates) {
        return ids(SpanResolver.resolve(List.of(candidates), LinkText.tokens(question), 3));
    }

    @Test
    void aRoleSaidOfTheNameBesideItIsNotLinked() {
        String question = "who was the president of pakistan in 1980";
        Candidate president = scored("president", "President", 3, 4, "exact", 0.72, 1);
        Candidate pakistan = scored("pakistan", "Pakistan", 5, 6, "exact", 0.70, 1);
        assertEquals(List.of("pakistan"), linked(question, president, pakistan));
        // alone, it is the topic
        assertEquals(List.of("president"), linked(question, president));
        // "on", and a determiner between
        assertEquals(List.of("film"), linked("who was the cinematographer on the raiders",
                scored("dp", "Cinematographer", 3, 4, "fulltext", 0.75, 1),
                scored("film", "The Raiders", 5, 7, "exact", 0.9, 1)));
        // typed as a name ("The Lord of the Rings" style), it stays and keeps its place
        president.capitalised = true;
        assertEquals(List.of("president", "pakistan"), linked(question, president, pakistan));
    }

    @Test
    void aRoleSaidOfAFartherNameGoesBehindItAndStaysLinked() {
        assertEquals(List.of("pakistan", "president"), linked("who was the president of modern pakistan",
                scored("president", "President", 3, 4, "exact", 0.72, 1),
                scored("pakistan", "Pakistan", 6, 7, "exact", 0.70, 1)));
        // with no name after "of", the score decides
        assertEquals(List.of("president", "pakistan"), linked("pakistan had which president of note",
                scored("pakistan", "Pakistan", 0, 1, "exact", 0.70, 1),
                scored("president", "President", 3, 4, "exact", 0.72, 1)));
    }

    @Test
    void aRoleAfterAPossessiveIsNotLinkedButAYearThereIs() {
        Candidate film = scored("film", "Zoolander", 3, 4, "exact", 0.9, 1);
        Candidate composer = scored("composer", "Composer", 4, 5, "exact", 0.7, 1);
        assertEquals(List.of("film"), linked("which films did zoolander's composer score", film, composer));
        assertEquals(List.of("film"), linked("which films did zoolander\u2019s composer score", film, composer));
        assertEquals(List.of("lee", "1989"), linked("spike lee's 1989 movie",
                scored("lee", "Spike Lee", 0, 2, "exact", 0.9, 1), scored("1989", "1989", 2, 3, "exact", 0.5, 1)));
        // a word many facts share is no exception: the role was meant on our questions
        Candidate profession = scored("composer", "Composer", 4, 5, "exact", 0.7, SpanResolver.SHARED_VALUE_DEGREE);
        assertEquals(List.of("film"), linked("which films did zoolander's composer score", film, profession));
    }

    @Test
    void candidatesOnTheSameWordsThatWereNotLinkedAreItsAlternativesBestFirst() {
        List<Candidate> candidates = new ArrayList<>(List.of(scored("town", "Lincoln", 2, 3, "exact", 0.6, 5),
                scored("president", "Abraham Lincoln", 2, 3, "head", 0.5, 50),
                scored("film", "Lincoln", 2, 3, "exact", 0.45, 9), scored("car", "Lincoln Motor", 2, 3, "head", 0.4, 3),
                scored("county", "Lincoln County", 2, 3, "head", 0.35, 2),
                scored("weak", "Lincoln Park", 2, 3, "head", LinkScoring.MIN_SCORE - 0.01, 2),
                scored("wider", "B Lincoln", 1, 3, "exact", 0.3, 2), scored("other", "E", 4, 5, "exact", 0.58, 1)));
        List<EntityLinker.Link> links = SpanResolver.resolve(candidates, TOKENS, 3);
        assertEquals(List.of("town", "other"), ids(links));
        // at most three, on the very same span, above the floor, and never an entity linked itself
        assertEquals(List.of("president", "film", "car"), ids(links.get(0).alternatives()));
        assertEquals(List.of(), links.get(1).alternatives());
        assertTrue(links.get(0).alternatives().stream().allMatch(a -> a.alternatives().isEmpty()));
    }
}
