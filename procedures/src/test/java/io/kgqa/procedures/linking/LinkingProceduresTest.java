package io.kgqa.procedures.linking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kgqa.procedures.InProcessNeo4j;
import io.kgqa.procedures.TestModels;
import io.kgqa.procedures.onnx.ModelsDir;
import io.kgqa.procedures.text.TextFunctions;
import io.kgqa.procedures.util.KnowledgeGraphs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.graphdb.Transaction;

/**
 * kgqa.link.entities through Cypher on an in-process Neo4j holding a small movie KG ('movies'), a second KG
 * ('other') sharing the indexes, and the schema of cypher_templates/schema (full-text index entity_name,
 * range indexes on (kg, name) and (kg, id)).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LinkingProceduresTest {

    private InProcessNeo4j neo4j;
    private Path models;
    private String previousModelsDir;

    @BeforeAll
    void start() throws Exception {
        // The tiny 4-d test encoder stands in for all-MiniLM-L6-v2 (the vector fallback's encoder).
        models = Files.createTempDirectory("kgqa-link-models");
        TestModels.copyTree(Path.of(getClass().getResource("/models/encoder/tiny-encoder").toURI()),
                models.resolve("encoder/all-MiniLM-L6-v2"));
        previousModelsDir = System.setProperty(ModelsDir.PROPERTY, models.toString());

        neo4j = InProcessNeo4j.builder()
                .withProcedure(LinkingProcedures.class)
                .withFunction(TextFunctions.class)
                .build()
                .withEntitySchema();
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'movies', status: 'complete', loaded_at: datetime('2024-01-02T00:00:00Z')})
                CREATE (:KG {name: 'other', status: 'complete', loaded_at: datetime('2024-01-01T00:00:00Z')})
                WITH 1 AS one
                UNWIND [
                  ['The Fall', 'The Fall'], ['Tarsem Singh', 'tarsem'], ['Chopper', 'Chopper'],
                  ['Andrew Dominik', 'Andrew Dominik'], ['The Godfather', 'The Godfather'],
                  ['The Godfather Part II', 'The Godfather Part II'], ['Francis Ford Coppola', 'Francis Ford Coppola'],
                  ['Heat', 'Heat'], ['Michael Mann', 'Michael Mann'], ['Tom Hanks', 'Tom Hanks'],
                  ['Ron Howard', 'Ron Howard'], ['Apollo 13', 'Apollo 13'], ['Lee Pace', 'Lee Pace'],
                  ['lee pace', 'lee pace'], ['Amélie', 'Amélie'], ['Jean-Pierre Jeunet', 'Jean-Pierre Jeunet'],
                  ["Schindler's List", "Schindler's List"], ['Steven Zaillian', 'Steven Zaillian'],
                  ['Golden Earrings', 'Golden Earrings']] AS pair
                CREATE (:Entity {kg: 'movies', name: pair[0], id: pair[1]})
                """);
        neo4j.database().executeTransactionally("""
                MATCH (fall:Entity {kg: 'movies', id: 'The Fall'}), (tarsem:Entity {kg: 'movies', id: 'tarsem'}),
                      (chopper:Entity {kg: 'movies', id: 'Chopper'}), (dominik:Entity {kg: 'movies', id: 'Andrew Dominik'}),
                      (g1:Entity {kg: 'movies', id: 'The Godfather'}), (g2:Entity {kg: 'movies', id: 'The Godfather Part II'}),
                      (coppola:Entity {kg: 'movies', id: 'Francis Ford Coppola'}), (heat:Entity {kg: 'movies', id: 'Heat'}),
                      (mann:Entity {kg: 'movies', id: 'Michael Mann'}), (hanks:Entity {kg: 'movies', id: 'Tom Hanks'}),
                      (howard:Entity {kg: 'movies', id: 'Ron Howard'}), (apollo:Entity {kg: 'movies', id: 'Apollo 13'}),
                      (pace:Entity {kg: 'movies', id: 'Lee Pace'}), (paceTag:Entity {kg: 'movies', id: 'lee pace'}),
                      (amelie:Entity {kg: 'movies', id: 'Amélie'}), (jeunet:Entity {kg: 'movies', id: 'Jean-Pierre Jeunet'}),
                      (list:Entity {kg: 'movies', id: "Schindler's List"}), (zaillian:Entity {kg: 'movies', id: 'Steven Zaillian'})
                CREATE (fall)-[:directed_by]->(tarsem), (fall)-[:starred_actors]->(pace), (fall)-[:has_tags]->(paceTag)
                CREATE (chopper)-[:directed_by]->(dominik)
                CREATE (g1)-[:directed_by]->(coppola), (g2)-[:directed_by]->(coppola), (heat)-[:directed_by]->(mann)
                CREATE (apollo)-[:starred_actors]->(hanks), (apollo)-[:directed_by]->(howard)
                CREATE (amelie)-[:directed_by]->(jeunet), (list)-[:written_by]->(zaillian)
                CREATE (:Relation {kg: 'movies', name: 'directed_by'}), (:Relation {kg: 'movies', name: 'starred_actors'}),
                       (:Relation {kg: 'movies', name: 'has_tags'}), (:Relation {kg: 'movies', name: 'written_by'})
                CREATE (:Entity {kg: 'other', id: 'Zardoz', name: 'Zardoz'})
                CREATE (:KG {name: 'typed', status: 'complete', loaded_at: datetime('2023-01-01T00:00:00Z')})
                CREATE (:Entity {kg: 'typed', id: 's1', name: 'Spider-Man'}),
                       (:Entity {kg: 'typed', id: 's3', name: 'Spider-Man 3'}),
                       (:Entity {kg: 'typed', id: 'fl', name: 'Florida'}),
                       (:Entity {kg: 'typed', id: 'fr', name: 'Flo Rida'}),
                       (:Entity {kg: 'typed', id: 'br', name: 'Brave'}),
                       (:Entity {kg: 'typed', id: 'ab', name: 'Atlanta Braves'})
                CREATE (:Entity {kg: 'other', id: 'Heat (other)', name: 'Heat'})
                """);
        neo4j.database().executeTransactionally("CALL db.awaitIndexes(60)");
    }

    @AfterAll
    void stop() throws IOException {
        if (neo4j != null) {
            neo4j.close();
        }
        TestModels.deleteTree(models);
        if (previousModelsDir == null) {
            System.clearProperty(ModelsDir.PROPERTY);
        } else {
            System.setProperty(ModelsDir.PROPERTY, previousModelsDir);
        }
    }

    // ------------------------------------------------------------------------------------------ linking

    private List<Map<String, Object>> link(String question, Map<String, Object> config) {
        Map<String, Object> parameters = new HashMap<>();
        parameters.put("q", question);
        parameters.put("config", config);
        return neo4j.rows("CALL kgqa.link.entities($q, $config) YIELD id, name, score, how, span "
                + "RETURN id, name, score, how, span", parameters);
    }

    private List<Map<String, Object>> link(String question) {
        return link(question, Map.of("kg", "movies"));
    }

    /** "name|how|span" of each row, best first. */
    private List<String> linked(String question) {
        return link(question).stream().map(r -> r.get("name") + "|" + r.get("how") + "|" + r.get("span")).toList();
    }

    private String top(String question) {
        List<String> rows = linked(question);
        assertTrue(!rows.isEmpty(), "nothing linked in '" + question + "'");
        return rows.get(0);
    }

    @Test
    void bracketsLinkByExactNameThenIdWithScoreOne() {
        List<Map<String, Object>> rows = link("who directed [The Fall]");
        assertEquals(1, rows.size());
        assertEquals(Map.of("id", "The Fall", "name", "The Fall", "score", 1.0, "how", "bracket", "span", "The Fall"),
                rows.get(0));
        assertEquals(List.of("Tarsem Singh|bracket|tarsem"), linked("what did [tarsem] direct"));
        assertEquals(List.of("Tom Hanks|bracket|Tom Hanks", "Ron Howard|bracket|Ron Howard"),
                linked("films of [Tom Hanks] and [Ron Howard] and [Tom Hanks]"));
    }

    @Test
    void aBracketWithATypoOrOtherCasingIsLinkedAsFreeText() {
        assertEquals(List.of("Chopper|fuzzy|Choper"), linked("who directed [Choper]"));
        assertEquals(List.of("The Fall|exact|the fall"), linked("who directed [the fall]"));
        assertEquals(List.of(), linked("who directed [Qwertyuiop Zxcv]"));
    }

    @Test
    void freeTextInSeveralCasings() {
        for (String question : List.of("who directed The Fall", "who directed the fall?", "Who directed THE FALL",
                "WHO DIRECTED THE FALL")) {
            Map<String, Object> best = link(question).get(0);
            assertEquals("The Fall", best.get("name"), question);
            assertTrue((Double) best.get("score") >= EntityLinker.MIN_SCORE, question);
        }
        // the case variants of a span (as typed, lower, Capitalised, Title) reach "The Fall" from "the fall";
        // from "THE FALL" only the full-text index does
        assertEquals("The Fall|exact|the fall", top("who directed the fall?"));
        assertEquals("The Fall|fulltext|THE FALL", top("WHO DIRECTED THE FALL"));
        // a name typed exactly as stored outranks the same name in another case
        assertTrue((Double) link("who directed The Fall").get(0).get("score")
                > (Double) link("who directed the fall").get(0).get("score"));
        assertEquals("Amélie|fulltext|Amelie", top("who directed Amelie"));
        assertEquals("Schindler's List|exact|Schindler's List", top("who wrote Schindler's List"));
    }

    /** The best-linked name in the KG 'typed' (names as people type them). */
    private Object topTyped(String question) {
        return link(question, Map.of("kg", "typed")).get(0).get("name");
    }

    @Test
    void aNameTypedWithoutItsSpaceOrHyphenIsFoundAndCountsAsOneWord() {
        // the index holds "Spider-Man" as two words: only the split phrases of "spiderman" find it
        assertEquals("Spider-Man", topTyped("who directed the first spiderman movie"));
        assertEquals("Spider-Man 3", topTyped("who directed spiderman 3"));
        // "florida" spells "Flo Rida" too, but said as one word it is the one-word name
        assertEquals("Florida", topTyped("where is the time zone in florida"));
    }

    @Test
    void aPluralAnotherNameHoldsAsTypedNamesThatOneBeforeItsSingular() {
        assertEquals("Atlanta Braves", topTyped("when did braves win the world series"));
        assertEquals("Atlanta Braves", topTyped("when did the Braves win"));
        assertEquals("Brave", topTyped("who directed brave"));
    }

    @Test
    void wordsThatSayWhenOrWhatKindAreNotTheTopic() throws IOException {
        // the common English words of this KG's linker, as training writes them
        Path words = models.resolve("kgs/kinds/linking/" + LinkingWords.FILE);
        Files.createDirectories(words.getParent());
        Files.writeString(words, "{\"common_words\": [\"the\", \"band\", \"who\", \"plays\", \"in\", \"was\", "
                + "\"governor\", \"of\", \"florida\"], \"entities\": 4}");
        try (Transaction tx = neo4j.database().beginTx()) { // never committed
            kg(tx, "kinds", "complete", "2023-01-01T00:00:00Z");
            tx.execute("""
                    CREATE (:Entity {kg: 'kinds', id: 'y12', name: '2012'}),
                           (:Entity {kg: 'kinds', id: 'fl', name: 'Florida'}),
                           (:Entity {kg: 'kinds', id: 'tb', name: 'The Band'}),
                           (:Entity {kg: 'kinds', id: 'rh', name: 'Radiohead'})
                    """);
            tx.execute("CALL db.awaitIndexes(60)");
            // a year beside a name says when, as ordinary words say what: the film named "2012" is not the topic
            assertEquals(List.of("fl", "y12"), linkedIds(tx, "who was the governor of florida 2012"));
            // after "in" it is as often the topic itself (a KG whose years are values many facts share)
            assertEquals(List.of("y12", "fl"), linkedIds(tx, "which governor of florida was elected in 2012"));
            // "the band" right before a name says what it is: "The Band" is no second topic
            assertEquals(List.of("rh"), linkedIds(tx, "who plays in the band radiohead"));
        } finally {
            Files.deleteIfExists(words);
        }
    }

    private static List<String> linkedIds(Transaction tx, String question) {
        List<String> rows = new ArrayList<>();
        tx.execute("CALL kgqa.link.entities($q, {kg: 'kinds'}) YIELD id RETURN id", Map.of("q", question))
                .forEachRemaining(r -> rows.add((String) r.get("id")));
        return rows;
    }

    @Test
    void aOneLetterTypoIsLinkedAsFuzzy() {
        assertEquals(List.of("Chopper|fuzzy|Choper"), linked("who directed Choper"));
        assertEquals("The Godfather Part II|fuzzy|The Godfathr Part II", top("who directed The Godfathr Part II"));
    }

    @Test
    void aLongerExactNameBeatsItsParts() {
        assertEquals("The Godfather Part II|exact|The Godfather Part II", top("who directed The Godfather Part II"));
        assertEquals("The Godfather|exact|The Godfather", top("who directed The Godfather"));
    }

    @Test
    void twoEntitiesInOneQuestion() {
        assertEquals(List.of("Ron Howard|exact|Ron Howard", "Tom Hanks|exact|Tom Hanks"),
                linked("which movies did Tom Hanks make with Ron Howard"));
        assertEquals(List.of("Ron Howard|exact|Ron Howard"),
                link("which movies did Tom Hanks make with Ron Howard", Map.of("kg", "movies", "maxEntities", 1))
                        .stream().map(r -> r.get("name") + "|" + r.get("how") + "|" + r.get("span")).toList());
    }

    @Test
    void namesakesAreBothKeptBestFirst() {
        // no capitals: the person and the tag are nearly equally exact; "star" nudges towards the actor
        assertEquals(List.of("Lee Pace|exact|lee pace", "lee pace|exact|lee pace"), linked("what films did lee pace star in"));
    }

    @Test
    void unknownNamesAndQuestionWordsGiveNothing() {
        assertEquals(List.of(), linked("who directed Qwertyuiop"));
        assertEquals(List.of(), linked("what films were directed by whom"));
        assertEquals(List.of(), linked(""));
        assertEquals(List.of(), linked("   \t "));
        assertEquals(List.of(), linked("?!"));
    }

    @Test
    void aNameFollowedByOneItIsRelatedToIsQualifiedByIt() {
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'places', status: 'complete', loaded_at: datetime('2023-01-01T00:00:00Z')})
                CREATE (nc:Entity {kg: 'places', id: 'nc', name: 'North Carolina'})
                CREATE (city:Entity {kg: 'places', id: 'charlotte-nc', name: 'Charlotte'})
                CREATE (:Entity {kg: 'places', id: 'charlotte-person', name: 'Charlotte'})
                CREATE (:Entity {kg: 'places', id: 'sedona', name: 'Sedona'}), (:Entity {kg: 'places', id: 'az', name: 'Arizona'})
                CREATE (nc)-[:contains]->(city)
                CREATE (title:Entity {kg: 'places', id: 'president', name: 'President'})
                CREATE (jfk:Entity {kg: 'places', id: 'jfk', name: 'John F. Kennedy'})
                CREATE (jfk)-[:profession]->(title), (jfk)-[:born_in]->(:Entity {kg: 'places', id: 'brookline',
                    name: 'Brookline'})
                CREATE (:Entity {kg: 'places', id: 'lbj', name: 'Lyndon B. Johnson'})-[:profession]->(title)
                """);
        // a title many people hold: a shared value, kept beside a stronger name
        neo4j.database().executeTransactionally("""
                MATCH (title:Entity {kg: 'places', id: 'president'})
                UNWIND range(1, $n) AS i
                CREATE (:Entity {kg: 'places', id: 'holder-' + i, name: 'Holder ' + i})-[:profession]->(title)
                """, Map.of("n", SpanResolver.SHARED_VALUE_DEGREE));
        neo4j.database().executeTransactionally("CALL db.awaitIndexes(60)");
        try {
            // the region says which Charlotte, and is not a topic of its own
            List<Map<String, Object>> rows = link("what county is charlotte north carolina", Map.of("kg", "places"));
            assertEquals(List.of("charlotte-nc"), rows.stream().map(r -> r.get("id")).toList());
            // two names side by side that the KG does not relate both stand
            List<Map<String, Object>> apart = link("what to see near sedona arizona", Map.of("kg", "places"));
            assertEquals(Set.of("sedona", "az"), apart.stream().map(r -> r.get("id")).collect(Collectors.toSet()));
            // a title before a name does not qualify it: the broader of the two is the qualifier, and the
            // title has more facts than the man
            List<Map<String, Object>> titled = link("who shot president john f kennedy", Map.of("kg", "places"));
            assertTrue(titled.stream().anyMatch(r -> "jfk".equals(r.get("id"))), titled.toString());
        } finally {
            neo4j.database().executeTransactionally("MATCH (n {kg: 'places'}) DETACH DELETE n");
            neo4j.database().executeTransactionally("MATCH (k:KG {name: 'places'}) DELETE k");
        }
    }

    @Test
    void aPlaceIsLinkedByTheWordForItsPeopleWhenTheKgVouchesForIt() {
        neo4j.database().executeTransactionally("""
                CREATE (:KG {name: 'nations', status: 'complete', loaded_at: datetime('2023-01-01T00:00:00Z')})
                CREATE (canada:Entity {kg: 'nations', id: 'canada', name: 'Canada'})
                CREATE (canada)-[:currency]->(:Entity {kg: 'nations', id: 'cad', name: 'Canadian dollar'})
                CREATE (china:Entity {kg: 'nations', id: 'china', name: 'China'})
                CREATE (china)-[:official_language]->(:Entity {kg: 'nations', id: 'zh', name: 'Chinese language'})
                CREATE (:Entity {kg: 'nations', id: 'scott', name: 'Scott'})-[:profession]->
                    (:Entity {kg: 'nations', id: 'actor', name: 'Actor'})
                """);
        neo4j.database().executeTransactionally("CALL db.awaitIndexes(60)");
        Map<String, Object> nations = Map.of("kg", "nations");
        try {
            // no entity is named "canadians": the word for its people says Canada, and a neighbour vouches
            assertEquals(List.of("canada|derived|canadians"), link("what sports do canadians like", nations).stream()
                    .map(r -> r.get("id") + "|" + r.get("how") + "|" + r.get("span")).toList());
            // the language's own name, said without its common word, comes before the place derived from it
            List<Object> chinese = link("what do chinese people speak", nations).stream().map(r -> r.get("id"))
                    .toList();
            assertTrue(chinese.contains("china"), chinese.toString());
            // nothing beside Scott is named "scottish": a surname is no place, so nothing is derived
            assertTrue(link("what do scottish people eat", nations).stream().noneMatch(r -> "scott".equals(r.get("id"))));
        } finally {
            neo4j.database().executeTransactionally("MATCH (n {kg: 'nations'}) DETACH DELETE n");
            neo4j.database().executeTransactionally("MATCH (k:KG {name: 'nations'}) DELETE k");
        }
    }

    @Test
    void linkingIsScopedToOneKg() {
        assertEquals(List.of(), linked("who directed Zardoz"));
        assertEquals(List.of("Zardoz|exact|Zardoz"), link("who directed Zardoz", Map.of("kg", "other")).stream()
                .map(r -> r.get("name") + "|" + r.get("how") + "|" + r.get("span")).toList());
        // 'Heat' is in both KGs: each KG gets its own
        assertEquals("Heat", link("who directed Heat").get(0).get("id"));
        assertEquals("Heat (other)", link("who directed Heat", Map.of("kg", "other")).get(0).get("id"));
        assertEquals("Heat (other)", link("who directed [Heat]", Map.of("kg", "other")).get(0).get("id"));
        // without kg: the most recently loaded complete KG
        assertEquals("Heat", link("who directed Heat", Map.of()).get(0).get("id"));
    }

    @Test
    void injectionLookingTextIsJustText() {
        long before = countEverything();
        for (String question : List.of(
                "who directed \"The Fall\" OR name:* AND NOT Heat~2^3",
                "') MATCH (n) DETACH DELETE n //",
                "\" }) MATCH (n) DETACH DELETE n RETURN 1 //",
                "who directed $kg and $query",
                "who directed {{ kg }} {% if x %}",
                "title:(The OR Fall) && Heat || Chopper \\ / -",
                "[The Fall' OR '1'='1]",
                "[",
                "]]] [[[",
                "who directed The Fall\"; CALL db.clearQueryCaches(); //",
                "AND OR NOT",
                "*?~^:")) {
            link(question); // no error
        }
        assertEquals("The Fall", link("who directed \"The Fall\" OR name:* AND NOT Heat~2^3").get(0).get("name"));
        assertEquals(before, countEverything(), "nothing written");
    }

    private long countEverything() {
        return (Long) neo4j.single("CALL () { MATCH (n) RETURN count(n) AS nodes } "
                + "CALL () { MATCH ()-[r]->() RETURN count(r) AS relationships } RETURN nodes + relationships AS n", Map.of());
    }

    @Test
    void argumentsAreValidatedWithClearMessages() {
        assertContains(errorOf(() -> link(null, Map.of("kg", "movies"))), "question must be a string, got null");
        assertContains(errorOf(() -> link("q", Map.of("kg", "movies", "limit", 3))),
                "config has an unknown key 'limit'; known keys: kg, maxEntities");
        assertContains(errorOf(() -> link("q", Map.of("maxEntities", 0))), "config.maxEntities must be between 1 and 20, got 0");
        assertContains(errorOf(() -> link("q", Map.of("maxEntities", 21))), "config.maxEntities must be between 1 and 20, got 21");
        assertContains(errorOf(() -> link("q", Map.of("maxEntities", "three"))),
                "config.maxEntities must be an integer, got the string 'three'");
        assertContains(errorOf(() -> link("q", Map.of("kg", "nokg"))),
                "config.kg: no knowledge graph named 'nokg' is loaded (loaded: movies, other, typed)");
        assertContains(errorOf(() -> link("q", Map.of("kg", ""))), "config.kg must be a non-empty string, got the string ''");
        assertContains(errorOf(() -> link("q", Map.of("kg", 5L))), "config.kg must be a non-empty string, got the number 5");
        assertContains(errorOf(() -> neo4j.rows("CALL kgqa.link.entities('q', {kg: 'movies'}, 3)", Map.of())),
                "kgqa.link.entities");
    }

    @Test
    void theProcedureIsDescribedAndReadOnly() {
        Map<String, Object> row = neo4j.rows("SHOW PROCEDURES YIELD name, description, mode, signature "
                + "WHERE name = 'kgqa.link.entities' RETURN description, mode, signature", Map.of()).get(0);
        assertEquals("READ", row.get("mode"));
        assertTrue(((String) row.get("description")).startsWith("kgqa.link.entities(question :: STRING"));
        assertEquals("kgqa.link.entities(question :: STRING, config = {} :: MAP) :: (id :: STRING, name :: STRING,"
                + " score :: FLOAT, how :: STRING, span :: STRING, alternatives :: LIST<MAP>)", row.get("signature"));
        Map<String, Object> candidates = neo4j.rows("SHOW PROCEDURES YIELD name, description, mode, signature "
                + "WHERE name = 'kgqa.link.candidates' RETURN description, mode, signature", Map.of()).get(0);
        assertEquals("READ", candidates.get("mode"));
        assertTrue(((String) candidates.get("description")).startsWith("kgqa.link.candidates(question :: STRING"));
    }

    // --------------------------------------------------------------------------------- vector fallback

    @Test
    void theVectorFallbackLinksNearIdenticalEmbeddingsOnly() {
        // "unaffable" matches no name; its (tiny-encoder) embedding is stored on Golden Earrings in a 4-d index.
        try {
            neo4j.database().executeTransactionally("""
                    MATCH (g:Entity {kg: 'movies', id: 'Golden Earrings'}) SET g.embedding = kgqa.text.embed('unaffable')
                    """);
            neo4j.database().executeTransactionally("CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (e:Entity)"
                    + " ON e.embedding OPTIONS {indexConfig: {`vector.dimensions`: 4, `vector.similarity_function`: 'cosine'}}");
            neo4j.database().executeTransactionally("CALL db.awaitIndexes(60)");
            List<Map<String, Object>> rows = link("who directed unaffable");
            assertEquals(1, rows.size(), rows.toString());
            assertEquals("Golden Earrings", rows.get(0).get("name"));
            assertEquals("vector", rows.get(0).get("how"));
            assertEquals("unaffable", rows.get(0).get("span"));
            // never when a name already scores
            assertEquals(List.of("Chopper|fuzzy|Choper"), linked("who directed Choper unaffable"));

            // no encoder files: no fallback, no error
            String models = System.setProperty(ModelsDir.PROPERTY, this.models.resolve("nowhere").toString());
            try {
                assertEquals(List.of(), linked("who directed unaffable"));
            } finally {
                System.setProperty(ModelsDir.PROPERTY, models);
            }
        } finally {
            neo4j.database().executeTransactionally("DROP INDEX entity_embedding IF EXISTS");
            neo4j.database().executeTransactionally("MATCH (g:Entity {kg: 'movies', id: 'Golden Earrings'}) REMOVE g.embedding");
        }
        // no vector index: no fallback, no error
        assertEquals(List.of(), linked("who directed unaffable"));
    }

    @Test
    void aTitleBeforeASurnameLinksTheNamesakeWhoHoldsIt() throws IOException {
        // "president" is a common English word of this KG's linker: typed in lower case, it is an ordinary word
        Path words = models.resolve("kgs/titles/linking/" + LinkingWords.FILE);
        Files.createDirectories(words.getParent());
        Files.writeString(words, "{\"common_words\": [\"president\", \"who\", \"did\", \"marry\"], \"entities\": 3}");
        try (Transaction tx = neo4j.database().beginTx()) { // never committed
            kg(tx, "titles", "complete", "2023-01-01T00:00:00Z");
            tx.execute("""
                    CREATE (title:Entity {kg: 'titles', id: 'president', name: 'President'})
                    CREATE (:Entity {kg: 'titles', id: 'jfk', name: 'John F. Kennedy'})-[:office]->(title)
                    CREATE (:Entity {kg: 'titles', id: 'george', name: 'George Kennedy'})
                        -[:profession]->(:Entity {kg: 'titles', id: 'actor', name: 'Actor'})
                    WITH title UNWIND range(1, $n) AS i
                    CREATE (:Entity {kg: 'titles', id: 'holder-' + i, name: 'Holder ' + i})-[:office]->(title)
                    """, Map.of("n", SpanResolver.SHARED_VALUE_DEGREE));
            tx.execute("CALL db.awaitIndexes(60)");
            List<String> rows = new ArrayList<>();
            tx.execute("CALL kgqa.link.entities($q, {kg: 'titles'}) YIELD id RETURN id",
                            Map.of("q", "who did president kennedy marry"))
                    .forEachRemaining(r -> rows.add((String) r.get("id")));
            // the Kennedy who holds the office, before the office; George Kennedy holds none
            assertEquals(List.of("jfk", "president"), rows);
        } finally {
            Files.deleteIfExists(words);
        }
    }

    @Test
    void initialsLinkWithinTheirOwnKgWhenTwoKgsShareIds() throws IOException {
        // the same dump loaded twice ('twin-a', 'twin-b') has the same ids in both KGs
        Path words = models.resolve("kgs/twin-a/linking/" + LinkingWords.FILE);
        Files.createDirectories(words.getParent());
        Files.writeString(words, "{\"initials\": {\"usa\": [\"m.09c7w0\"]}, \"entities\": 1}");
        try (Transaction tx = neo4j.database().beginTx()) { // never committed: the other tests see two KGs
            for (String twin : List.of("twin-a", "twin-b")) {
                kg(tx, twin, "complete", "2024-01-03T00:00:00Z");
                tx.execute("CREATE (:Entity {kg: $kg, id: 'm.09c7w0', name: 'United States of America'})",
                        Map.of("kg", twin));
            }
            List<String> rows = new ArrayList<>();
            tx.execute("CALL kgqa.link.entities($q, {kg: 'twin-a'}) YIELD name, how RETURN name, how",
                            Map.of("q", "what is the capital of the usa"))
                    .forEachRemaining(r -> rows.add(r.get("name") + "|" + r.get("how")));
            assertEquals(List.of("United States of America|initials"), rows);
        }
    }

    // --------------------------------------------------------------------------------- knowledge graphs

    @Test
    void theDefaultKgIsTheLatestCompleteOne() {
        try (Transaction tx = neo4j.database().beginTx()) { // never committed: the other tests see two KGs
            assertEquals("movies", KnowledgeGraphs.defaultKg(tx, "config.kg"));
            kg(tx, "newer", "loading", "2025-01-01T00:00:00Z");
            kg(tx, "undated", "complete", null);
            assertEquals("movies", KnowledgeGraphs.defaultKg(tx, "config.kg"));
            kg(tx, "latest", "complete", "2024-06-01T00:00:00Z");
            assertEquals("latest", KnowledgeGraphs.defaultKg(tx, "config.kg"));
            assertEquals("latest", KnowledgeGraphs.require(tx, "latest", "config.kg"));
            tx.findNodes(KnowledgeGraphs.KG).forEachRemaining(Node::delete);
            IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                    () -> KnowledgeGraphs.defaultKg(tx, "config.kg"));
            assertEquals("config.kg: no knowledge graph is loaded; run `kgqa load` first", none.getMessage());
            assertEquals(" (none is loaded)", KnowledgeGraphs.known(tx));
        }
        try (Transaction tx = neo4j.database().beginTx()) {
            assertEquals(" (loaded: movies, other, typed)", KnowledgeGraphs.known(tx));
            IllegalArgumentException blank = assertThrows(IllegalArgumentException.class,
                    () -> KnowledgeGraphs.require(tx, null, "kg"));
            assertEquals("kg must be the name of a loaded KG, got null", blank.getMessage());
        }
    }

    private static void kg(Transaction tx, String name, String status, String loadedAt) {
        Node kg = tx.createNode(KnowledgeGraphs.KG);
        kg.setProperty("name", name);
        kg.setProperty("status", status);
        if (loadedAt != null) {
            kg.setProperty("loaded_at", ZonedDateTime.parse(loadedAt));
        }
    }

    // ---------------------------------------------------------------------------- candidates and learned scores

    private List<Map<String, Object>> candidates(String question) {
        return neo4j.rows("CALL kgqa.link.candidates($q, {kg: 'movies'}) YIELD name, how, handScore, score, learned,"
                + " features RETURN name, how, handScore, score, learned, features", Map.of("q", question));
    }

    /** A scorer that trusts typos: a fuzzy match scores about 0.99, any other about 0.007. */
    private Path writeFuzzyLovingScorer(double floor) throws IOException {
        Path file = ModelsDir.kgModelDir("movies", "linking").resolve(LinkScorer.FILE);
        Files.createDirectories(file.getParent());
        List<String> names = new ArrayList<>(LinkFeatures.NAMES);
        java.util.Collections.reverse(names); // the file's order is its own: weights are read by name
        List<String> weights = names.stream().map(n -> n.equals("how_fuzzy") ? "10.0" : "0.0").toList();
        Files.writeString(file, "{\"features\": [" + names.stream().map(n -> "\"" + n + "\"")
                .collect(Collectors.joining(", ")) + "], \"weights\": [" + String.join(", ", weights)
                + "], \"bias\": -5.0, \"floor\": " + floor + "}");
        Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis()
                + (long) (floor * 1000))); // a new version of the file is read again
        return file;
    }

    @Test
    void candidatesStreamEveryPairWithItsFeaturesAndTheHandScoreWithoutAScorer() {
        List<Map<String, Object>> rows = candidates("who directed Heat and Choper");
        List<Object> names = rows.stream().map(r -> r.get("name")).toList();
        assertTrue(names.contains("Heat") && names.contains("Chopper"), names.toString());
        for (Map<String, Object> row : rows) {
            assertEquals(false, row.get("learned"));
            assertEquals(row.get("handScore"), row.get("score"));
            assertEquals(Set.copyOf(LinkFeatures.NAMES), ((Map<?, ?>) row.get("features")).keySet());
        }
        assertEquals(List.of(), candidates("   "));
        assertContains(errorOf(() -> neo4j.rows("CALL kgqa.link.candidates('heat', {kg: 'movies', top: 3})",
                Map.of())), "top");
    }

    @Test
    void aLearnedScorerOrdersTheLinksAndItsFloorDropsThoseBelowIt() throws IOException {
        assertEquals(List.of("Heat|exact|Heat", "Chopper|fuzzy|Choper"), linked("who directed Heat and Choper"));
        Path file = writeFuzzyLovingScorer(0.001);
        try {
            assertEquals(List.of("Chopper|fuzzy|Choper", "Heat|exact|Heat"), linked("who directed Heat and Choper"));
            Map<String, Object> chopper = candidates("who directed Heat and Choper").get(0);
            assertEquals("Chopper", chopper.get("name"));
            assertEquals(true, chopper.get("learned"));
            assertTrue((Double) chopper.get("score") > 0.99 && (Double) chopper.get("handScore") < 0.99,
                    chopper.toString());
            writeFuzzyLovingScorer(0.5);
            assertEquals(List.of("Chopper|fuzzy|Choper"), linked("who directed Heat and Choper"));
            Files.writeString(file, "{\"features\": [\"hand_score\"], \"weights\": [1.0], \"bias\": 0}");
            Files.setLastModifiedTime(file, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis()
                    + 5000));
            // a scorer of other features is not read: the hand score links
            assertEquals(List.of("Heat|exact|Heat", "Chopper|fuzzy|Choper"), linked("who directed Heat and Choper"));
        } finally {
            Files.deleteIfExists(file);
        }
        assertEquals(List.of("Heat|exact|Heat", "Chopper|fuzzy|Choper"), linked("who directed Heat and Choper"));
    }

    // ------------------------------------------------------------------------------------------ helpers

    private static String errorOf(Runnable call) {
        QueryExecutionException error = assertThrows(QueryExecutionException.class, call::run);
        return error.getMessage();
    }

    private static void assertContains(String actual, String expected) {
        assertTrue(actual.contains(expected), "expected '" + expected + "' in: " + actual);
    }
}
