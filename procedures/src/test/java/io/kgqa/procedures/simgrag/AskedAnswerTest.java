package io.kgqa.procedures.simgrag;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;

/** The answer's kind against the asked one, and the shorter or longer pattern tried when they differ. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AskedAnswerTest {

    private static final Function<String, String> TEXT = Map.of("directed_by", "directed by", "release_year",
            "release year", "starred_actors", "starred actors")::get;
    private static final OfflinePatternBuilder.Asked MOVIES = new OfflinePatternBuilder.Asked("movies", null);
    private static final OfflinePatternBuilder.Asked YEARS = new OfflinePatternBuilder.Asked("years", "release_year");
    private static final OfflinePatternBuilder.Asked ACTORS = new OfflinePatternBuilder.Asked("actors", "starred_actors");

    private InProcessNeo4j neo4j;

    @BeforeAll
    void start() {
        neo4j = InProcessNeo4j.builder().build();
        neo4j.database().executeTransactionally("""
                CREATE (k:Entity {kg: 'test', id: 'Kismet'}), (d:Entity {kg: 'test', id: 'Dieterle'}),
                       (y:Entity {kg: 'test', id: '1944'}), (a:Entity {kg: 'test', id: 'Colman'})
                CREATE (k)-[:directed_by]->(d), (k)-[:release_year]->(y), (k)-[:starred_actors]->(a)
                """);
    }

    @AfterAll
    void stop() {
        neo4j.close();
    }

    private static List<String> show(List<PatternGraph.RawEdge> edges) {
        return edges == null ? null : edges.stream().map(e -> e.head() + " -" + e.relation() + "- " + e.tail()).toList();
    }

    private static Node node(Transaction tx, String id) {
        return tx.findNode(org.neo4j.graphdb.Label.label("Entity"), "id", id);
    }

    @Test
    void kindsComeFromTheKgsDirections() {
        try (Transaction tx = neo4j.database().beginTx()) {
            assertTrue(AskedAnswer.fits(node(tx, "Kismet"), MOVIES)); // a head: what relations describe
            assertFalse(AskedAnswer.fits(node(tx, "Dieterle"), MOVIES));
            assertTrue(AskedAnswer.fits(node(tx, "1944"), YEARS)); // the tail of release_year
            assertFalse(AskedAnswer.fits(node(tx, "Kismet"), YEARS));
        }
    }

    @Test
    void aPatternOneHopShortGoesOnFromItsAnswer() {
        List<PatternGraph.RawEdge> toDirector = List.of(new PatternGraph.RawEdge("Colman", "starred actors", "UNKNOWN 1"),
                new PatternGraph.RawEdge("UNKNOWN 1", "directed by", "UNKNOWN answer"));
        try (Transaction tx = neo4j.database().beginTx()) {
            // movies asked, a director reached: back over directed_by to the movies he made
            assertEquals(List.of("Colman -starred actors- UNKNOWN 1", "UNKNOWN 1 -directed by- UNKNOWN reached",
                            "UNKNOWN reached -directed by- UNKNOWN answer"),
                    show(AskedAnswer.extended(toDirector, "UNKNOWN answer", MOVIES, node(tx, "Dieterle"),
                            "directed_by", TEXT)));
            // actors asked, a movie reached: one starred_actors hop on
            assertEquals("UNKNOWN reached -starred actors- UNKNOWN answer", show(AskedAnswer.extended(toDirector,
                    "UNKNOWN answer", ACTORS, node(tx, "Kismet"), "directed_by", TEXT)).get(2));
            // years asked, a director reached: back to his movies, then to their years
            assertEquals(List.of("UNKNOWN reached -directed by- UNKNOWN between",
                            "UNKNOWN between -release year- UNKNOWN answer"),
                    show(AskedAnswer.extended(toDirector, "UNKNOWN answer", YEARS, node(tx, "Dieterle"),
                            "directed_by", TEXT)).subList(2, 4));
            assertNull(AskedAnswer.extended(toDirector, "UNKNOWN answer", MOVIES, node(tx, "Dieterle"), null, TEXT));
        }
    }

    @Test
    void theAskedRelationTakenTwiceLosesItsLastHop() {
        List<PatternGraph.RawEdge> outAndBack = List.of(new PatternGraph.RawEdge("Raimi", "any", "UNKNOWN 1", true),
                new PatternGraph.RawEdge("UNKNOWN 1", "release year", "UNKNOWN 2"),
                new PatternGraph.RawEdge("UNKNOWN 2", "release year", "UNKNOWN answer"));
        assertEquals(List.of("Raimi -any- UNKNOWN 1", "UNKNOWN 1 -release year- UNKNOWN answer"),
                show(AskedAnswer.shortened(outAndBack, "UNKNOWN answer", YEARS, TEXT)));
        assertNull(AskedAnswer.shortened(outAndBack, "UNKNOWN answer", MOVIES, TEXT));
        assertNull(AskedAnswer.shortened(outAndBack.subList(0, 2), "UNKNOWN 2", YEARS, TEXT)); // taken once only
    }
}
