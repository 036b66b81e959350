package io.kgqa.procedures.simgrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The offline builder's English rules, with a stand-in encoder that knows only identical words (each word is its
 * own unit vector), so that every relation it finds comes from a shared word or a shared stem.
 */
class OfflinePatternBuilderTest {

    private static final Map<String, String> RELATIONS = new LinkedHashMap<>();

    static {
        RELATIONS.put("directed_by", "directed by");
        RELATIONS.put("written_by", "written by");
        RELATIONS.put("starred_actors", "starred actors");
        RELATIONS.put("release_year", "release year");
        RELATIONS.put("in_language", "in language");
    }

    private static float[] oneHot(String text) {
        float[] v = new float[4096];
        v[Math.floorMod(text.hashCode(), v.length)] = 1;
        return v;
    }

    private static List<String> edges(String question, String... entities) {
        return edges(question, (i, r) -> true, entities);
    }

    private static List<String> edges(String question, java.util.function.BiPredicate<Integer, String> incident,
                                      String... entities) {
        return built(question, incident, entities).edges().stream()
                .map(e -> e.head() + " -" + e.relation() + "- " + e.tail()).toList();
    }

    private static OfflinePatternBuilder.Built built(String question,
                                                     java.util.function.BiPredicate<Integer, String> incident,
                                                     String... entities) {
        OfflinePatternBuilder builder = new OfflinePatternBuilder(new RelationMentions(RELATIONS, SUBJECT_AWARE));
        List<OfflinePatternBuilder.Entity> linked = java.util.Arrays.stream(entities)
                .map(e -> new OfflinePatternBuilder.Entity(e, e)).toList();
        return builder.build(question, linked, incident);
    }

    /** One-hot words, except "movies": as close to three relation texts as a real encoder puts it (0.58 each). */
    private static final java.util.function.Function<String, float[]> SUBJECT_AWARE = text -> {
        if (!text.equals("movies")) {
            return oneHot(text);
        }
        float[] v = new float[4096];
        for (String r : List.of("directed by", "written by", "starred actors")) {
            v[Math.floorMod(r.hashCode(), v.length)] = (float) (1 / Math.sqrt(3));
        }
        return v;
    };

    @Test
    void theWhPhraseSaysWhatKindOfAnswerIsAskedFor() {
        OfflinePatternBuilder.Asked actors = built("which actors starred in Kismet", (i, r) -> true, "Kismet").asked();
        assertEquals(new OfflinePatternBuilder.Asked("actors", "starred_actors"), actors);
        assertEquals(new OfflinePatternBuilder.Asked("movies", null),
                built("which movies were directed by the director of Kismet", (i, r) -> true, "Kismet").asked());
        assertEquals("release_year", built("in which of the years was Kismet released", (i, r) -> true, "Kismet")
                .asked().relation());
        // an auxiliary after the wh-word, an entity, or no wh-word at all: nothing is said
        assertEquals(null, built("what did the director of Kismet do next", (i, r) -> true, "Kismet").asked());
        assertEquals(null, built("which Kismet actors", (i, r) -> true, "Kismet").asked());
        assertEquals(null, built("the movie Kismet, when was it released", (i, r) -> true, "Kismet").asked());
        assertEquals(null, built("who directed Kismet", (i, r) -> true, "Kismet").asked());
    }

    @Test
    void participlesAlsoNameTheirDoer() {
        assertEquals(List.of("director", "directer"), RelationMentions.agentNouns("directed"));
        assertEquals(List.of("producor", "producer"), RelationMentions.agentNouns("produced"));
        assertEquals(List.of("staror", "starer"), RelationMentions.agentNouns("starred"));
        assertEquals(List.of(), RelationMentions.agentNouns("written"));
        assertEquals(List.of(), RelationMentions.agentNouns("used"));
        // with the stand-in encoder, "director" is one of directed_by's own words now
        assertEquals(List.of("Kismet -directed by- UNKNOWN answer"), edges("who is the director of Kismet", "Kismet"));
    }

    @Test
    void theThingsByTheEntitysNeighbourAreARoundTrip() {
        assertEquals(List.of("Kismet -directed by- UNKNOWN 1", "UNKNOWN 1 -directed by- UNKNOWN 2",
                        "UNKNOWN 2 -release year- UNKNOWN answer"),
                edges("when were the movies by the director of Kismet released", "Kismet"));
        // the director himself: one hop
        assertEquals(List.of("Kismet -directed by- UNKNOWN answer"), edges("who is the director of Kismet", "Kismet"));
        assertEquals(List.of("Kismet -directed by- UNKNOWN 1", "UNKNOWN 1 -directed by- UNKNOWN 2",
                        "UNKNOWN 2 -release year- UNKNOWN answer"),
                edges("when were the movies by Kismet's director released", "Kismet"));
        // "the writer X" names X by its role: X's own movies
        assertEquals(List.of("Tom Hanks -written by- UNKNOWN 1", "UNKNOWN 1 -starred actors- UNKNOWN answer"),
                edges("who starred movies for the writer Tom Hanks", "Tom Hanks"));
    }

    @Test
    void aRelationWordWithTheEntityIsARoundTrip() {
        assertEquals(List.of("Tom Hanks -starred actors- UNKNOWN 1", "UNKNOWN 1 -starred actors- UNKNOWN answer"),
                edges("who acted with Tom Hanks", "Tom Hanks"));
        assertEquals(List.of("Kismet -starred actors- UNKNOWN answer"), edges("who acted in Kismet", "Kismet"));
    }

    @Test
    void aWordPointingAtAnEntityWithoutItsRelationBelongsToTheOther() {
        // "direct in 1957": the year has no directed_by, so "direct" is Bergman's; the year ties the answer
        assertEquals(List.of("Ingmar Bergman -directed by- UNKNOWN answer", "1957 -what did direct in- UNKNOWN answer"),
                edges("what did Ingmar Bergman direct in 1957", (i, r) -> i == 0 || !r.equals("directed_by"),
                        "Ingmar Bergman", "1957"));
    }

    @Test
    void oneRelationWordIsOneHop() {
        assertEquals(List.of("Kismet -directed by- UNKNOWN answer"), edges("who directed Kismet", "Kismet"));
        // two words for one relation ("year", "released") are still one hop
        assertEquals(List.of("Kismet -release year- UNKNOWN answer"), edges("what year was Kismet released", "Kismet"));
    }

    @Test
    void hopsLeaveTheEntityNearestWordFirst() {
        assertEquals(List.of("Tom Hanks -written by- UNKNOWN 1", "UNKNOWN 1 -directed by- UNKNOWN answer"),
                edges("who directed the films written by Tom Hanks", "Tom Hanks"));
        // a word bound to the entity ("the Kismet actors") leaves it first
        assertEquals(List.of("Kismet -starred actors- UNKNOWN 1", "UNKNOWN 1 -starred actors- UNKNOWN 2",
                        "UNKNOWN 2 -written by- UNKNOWN answer"),
                edges("who was the writer of the films starred by the Kismet actors", "Kismet"));
    }

    @Test
    void sharingWordsAndBoundAgentNounsMakeRoundTrips() {
        assertEquals(List.of("Kismet -directed by- UNKNOWN 1", "UNKNOWN 1 -directed by- UNKNOWN answer"),
                edges("which films share directors with Kismet", "Kismet"));
        assertEquals(List.of("Kismet -written by- UNKNOWN 1", "UNKNOWN 1 -written by- UNKNOWN answer"),
                edges("who are the co-writers of Kismet", "Kismet"));
        assertEquals(List.of("Kismet -written by- UNKNOWN 1", "UNKNOWN 1 -written by- UNKNOWN 2",
                        "UNKNOWN 2 -in language- UNKNOWN answer"),
                edges("what language are the films written by the writer of Kismet in", "Kismet"));
    }

    @Test
    void twoEntitiesMeetAtTheAnswer() {
        assertEquals(List.of("Heat -starred actors- UNKNOWN answer", "Ronin -starred actors- UNKNOWN answer"),
                edges("who starred in both Heat and Ronin", "Heat", "Ronin"));
        // an entity with no word of its own is tied to the answer by any relation, ranked by the question
        assertEquals(List.of("Ron Howard -directed by- UNKNOWN answer",
                        "Tom Hanks -which films did make with director- UNKNOWN answer"),
                edges("which films did Tom Hanks make with director Ron Howard", "Tom Hanks", "Ron Howard"));
    }

    @Test
    void asWellAsJoinsTheEntitiesEvenWhenWellIsOneOfARelationsPhrases() {
        OfflinePatternBuilder builder = new OfflinePatternBuilder(new RelationMentions(RELATIONS,
                Map.of("release_year", List.of("well")), SUBJECT_AWARE));
        List<String> edges = builder.build("who directed Heat as well as Ronin",
                        List.of(new OfflinePatternBuilder.Entity("Heat", "Heat"),
                                new OfflinePatternBuilder.Entity("Ronin", "Ronin")), (i, r) -> true)
                .edges().stream().map(e -> e.head() + " -" + e.relation() + "- " + e.tail()).toList();
        assertEquals(List.of("Heat -directed by- UNKNOWN answer", "Ronin -directed by- UNKNOWN answer"), edges);
    }

    @Test
    void noRelationWordRanksEveryRelationByTheQuestion() {
        assertEquals(List.of("Kismet -what about- UNKNOWN answer"), edges("what about Kismet", "Kismet"));
    }

    @Test
    void noEntityIsAnError() {
        assertThrows(IllegalArgumentException.class, () -> edges("who directed it"));
    }
}
