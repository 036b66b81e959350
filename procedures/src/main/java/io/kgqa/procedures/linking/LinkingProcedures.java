package io.kgqa.procedures.linking;

import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Limits;
import io.kgqa.procedures.util.Options;
import io.kgqa.procedures.util.TextLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/** The {@code kgqa.link.*} namespace: entity linking inside the database (the algorithm is {@link EntityLinker}). */
public class LinkingProcedures {

    private static final Set<String> ENTITIES_KEYS = Set.of("kg", "maxEntities", "secondaryRatio");

    @Context
    public Transaction tx;

    @Context
    public Log log;

    /**
     * One row of {@code kgqa.link.entities}. Record components: Neo4j maps them to YIELD columns.
     *
     * @param score in [0, 1]; 1 for a [bracketed] exact name or id
     * @param how   bracket, exact, singular, fulltext, fuzzy, head, partial, short, initials or vector
     * @param span  the words of the question that name the entity
     */
    public record LinkedEntity(String id, String name, double score, String how, String span,
                               List<Map<String, Object>> alternatives) {

        static LinkedEntity of(EntityLinker.Link link) {
            List<Map<String, Object>> alternatives = new ArrayList<>();
            for (EntityLinker.Link other : link.alternatives()) {
                alternatives.add(Map.of("id", other.id(), "name", other.name(), "score", other.score(), "how",
                        other.how(), "span", other.span()));
            }
            return new LinkedEntity(link.id(), link.name(), link.score(), link.how(), link.span(), alternatives);
        }
    }

    /** One row of {@code kgqa.link.candidates}. */
    public record LinkCandidate(String id, String name, String span, long start, long end, String how,
                                double handScore, double score, boolean learned, Map<String, Object> features) {

        static LinkCandidate of(EntityLinker.CandidateRow row) {
            return new LinkCandidate(row.id(), row.name(), row.span(), row.start(), row.end(), row.how(),
                    row.handScore(), row.score(), row.learned(), Map.copyOf(row.features()));
        }
    }

    @Procedure(name = "kgqa.link.candidates", mode = Mode.READ)
    @Description("kgqa.link.candidates(question :: STRING, config = {} :: MAP) :: (id :: STRING, name :: STRING,"
            + " span :: STRING, start :: INTEGER, end :: INTEGER, how :: STRING, handScore :: FLOAT, score :: FLOAT,"
            + " learned :: BOOLEAN, features :: MAP) - every (entity, span) candidate kgqa.link.entities weighs for a"
            + " question, before overlapping spans are resolved, best first: start and end are token positions"
            + " (end exclusive), handScore the hand-set score, score the KG's learned link scorer's probability"
            + " that the candidate names a topic of the question (the hand score, with learned false, when the KG"
            + " has no scorer: kgqa train all fits one), features what that scorer reads. [Brackets] are read as"
            + " free text. config: kg (default: the only or most recently loaded complete KG).")
    public Stream<LinkCandidate> candidates(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        if (question == null) {
            throw new BadArgumentException("question must be a string, got null");
        }
        TextLimits.question(question, "question");
        Options options = new Options(config, "config", Set.of("kg"));
        String kg = KnowledgeGraphs.fromConfig(tx, options);
        return new EntityLinker(tx, kg, log).candidates(question).stream().map(LinkCandidate::of);
    }

    @Procedure(name = "kgqa.link.entities", mode = Mode.READ)
    @Description("kgqa.link.entities(question :: STRING, config = {} :: MAP) :: (id :: STRING, name :: STRING,"
            + " score :: FLOAT, how :: STRING, span :: STRING, alternatives :: LIST<MAP>) - the topic entities of a"
            + " question, best first."
            + " [Bracketed] text is looked up by exact name, then id, else linked as free text. Free text: word"
            + " n-grams (up to 12 words) looked up by exact name in a few case variants, without a final"
            + " possessive, and a final plural as its singular, plus one full-text query (fuzzy for longer words,"
            + " plurals also as singulars) aligned back onto the question with a bounded edit distance (a swap of"
            + " two letters is one edit; a language-region tag glued to a name, 'Denmark-GB', is not a word of it), or"
            + " onto one capitalised word that is the last word of a person-like name (a surname, or a short first"
            + " name and the surname), plus, only"
            + " when nothing scores 0.3, near-identical names through the entity_embedding vector index; each"
            + " candidate is scored in [0, 1] (exact over fuzzy, longer over shorter, names over question words,"
            + " capitals; a span of ordinary English words counts less beside a name elsewhere in the question)"
            + " and overlapping spans are resolved best first; a name followed at once by one the KG relates it to"
            + " ('charlotte north carolina') keeps the first, those of its namesakes so related, and drops the"
            + " second; a title before a person's surname ('president kennedy') puts the namesake the KG says"
            + " holds it before the title; a role said of the name right beside it (\"the cinematographer of X\","
            + " \"X's composer\") is not linked, unless typed capitalised or a number. how is bracket, exact,"
            + " singular, fulltext, fuzzy,"
            + " head (a name without the words many names share), distinctive (a part of a name no other name"
            + " has), prefix (the first words of a name far better connected than the others that start so),"
            + " derived (a place or faith said by the word for its people or language, which the KG vouches for),"
            + " partial, short (a short first name before the surname, 'abe lincoln'), initials or vector;"
            + " span the words"
            + " linked. config: kg (default: the only or most"
            + " recently loaded complete KG); maxEntities (default " + Limits.LINKED_ENTITIES + ", between 1 and "
            + Limits.MAX_LINKED_ENTITIES + ": spans of the question;"
            + " entities of one name on one span share a place); secondaryRatio (default 0.75: an entity after"
            + " the first is kept only when it scores at least this share of the best, unless it is a number, a"
            + " value many facts share said exactly, or a name typed with its capitals (in a question typed"
            + " without capitals, a name of two or more words spelt closely); 0 keeps every one, as a"
            + " claim with several entities needs). alternatives: up to 3 other entities the same words may name"
            + " (candidates on the same words, not linked, scoring at least 0.3), best first, each {id, name,"
            + " score, how, span}: a question that leads nowhere from the first may mean one of them. An empty"
            + " question gives no rows.")
    public Stream<LinkedEntity> entities(
            @Name("question") String question,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        TextLimits.question(question, "question");
        Options options = new Options(config, "config", ENTITIES_KEYS);
        int maxEntities = options.integer("maxEntities", Limits.LINKED_ENTITIES, 1, Limits.MAX_LINKED_ENTITIES);
        if (question == null) {
            throw new BadArgumentException("question must be a string, got null");
        }
        String kg = KnowledgeGraphs.fromConfig(tx, options);
        double ratio = options.number("secondaryRatio", EntityLinker.SECONDARY_RATIO, 0, 1);
        return new EntityLinker(tx, kg, log).link(question, maxEntities, ratio).stream().map(LinkedEntity::of);
    }
}
