package io.kgqa.procedures.linking;

import io.kgqa.procedures.util.BadArgumentException;
import io.kgqa.procedures.util.Limits;
import io.kgqa.procedures.util.Options;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Transaction;
import org.neo4j.logging.Log;

/**
 * The topic entities of a {@code kgqa.*} call, for every namespace: the {@code topicIds} argument (FRAG,
 * SubgraphRAG's candidates and cosine), or {@code config.topicEntities}, or the question linked by
 * {@link EntityLinker} as {@code kgqa.link.entities} links it (SubgraphRAG, GSR, SimGRAG).
 *
 * <p>Finding none is one error, whichever way was asked ({@link #nothingFound}): every retriever walks out from
 * its topic entities, so without one it cannot answer, and saying so (and how to name the entity) tells a
 * Cypher caller more than an empty stream, which reads as "nothing in the KG answers this". The Python side
 * reads such a message as "this method cannot answer", and an empty stream as "the method found nothing".
 */
public final class TopicEntities {

    private static final Label ENTITY = Label.label("Entity");

    /** One topic entity and the words of the question that name it (what a pattern node stands for). */
    public record Topic(Node node, String span) {
    }

    /**
     * The topic entities of one call, in order, and the words that name them in the question (what the
     * question's masking replaces): config.topicSpans when given, else the given names or the linked words.
     */
    public record Topics(List<Topic> entities, List<String> spans) {
        public List<Node> nodes() {
            return entities.stream().map(Topic::node).toList();
        }
    }

    private TopicEntities() {
    }

    /**
     * The {@code :Entity} nodes of KG {@code kg} with these ids, in order.
     *
     * @throws BadArgumentException naming the first id that is not a string or not an entity of {@code kg}
     */
    public static List<Node> byIds(Transaction tx, String kg, List<Object> topicIds) {
        if (topicIds == null || topicIds.isEmpty()) {
            throw new BadArgumentException("topicIds must be a non-empty list of entity ids, got "
                    + (topicIds == null ? "null" : "an empty list"));
        }
        List<Node> topics = new ArrayList<>(topicIds.size());
        for (int i = 0; i < topicIds.size(); i++) {
            if (!(topicIds.get(i) instanceof String id)) {
                throw new BadArgumentException("topicIds[" + i + "] must be a string, got "
                        + Options.describe(topicIds.get(i)));
            }
            try (ResourceIterator<Node> found = tx.findNodes(ENTITY, "kg", kg, "id", id)) {
                if (!found.hasNext()) {
                    throw new BadArgumentException("topicIds[" + i + "]: no entity with id '" + id + "' in KG '"
                            + kg + "'");
                }
                topics.add(found.next());
            }
        }
        return topics;
    }

    /**
     * {@code given} resolved when the caller names the entities, else the entities {@code question} links to
     * (at most {@link Limits#LINKED_ENTITIES}, as {@code kgqa.link.entities} gives them by default).
     *
     * @param given config.topicEntities: names or ids, each of which must name an entity; null: link the question
     * @param spans config.topicSpans: the words that name each entity (with {@code given}, one per name); null:
     *     the given names, or the words the linker linked
     * @throws BadArgumentException when no entity is found ({@link #nothingFound}), a given name matches none, or
     *     {@code given} is empty or has another length than {@code spans}
     */
    public static Topics resolve(Transaction tx, String kg, Log log, String question, List<String> given,
                                 List<String> spans) {
        EntityLinker linker = new EntityLinker(tx, kg, log);
        if (given != null) {
            return named(linker, kg, given, spans);
        }
        List<Topic> linked = new ArrayList<>();
        List<String> words = new ArrayList<>();
        for (EntityLinker.Link link : linker.link(question, Limits.LINKED_ENTITIES)) {
            linked.add(new Topic(link.node(), link.span()));
            words.add(link.span());
        }
        if (linked.isEmpty()) {
            throw nothingFound(kg, question);
        }
        return new Topics(linked, spans != null ? spans : words);
    }

    /** The one error for a question in which no entity of {@code kg} is found. */
    public static BadArgumentException nothingFound(String kg, String question) {
        return new BadArgumentException("question: no topic entity of KG '" + kg + "' found in '" + question
                + "'; mark it with [brackets] or pass config.topicEntities");
    }

    /** Each name's entities (a name several entities share gives them all), each entity once. */
    private static Topics named(EntityLinker linker, String kg, List<String> given, List<String> spans) {
        if (given.isEmpty()) {
            throw new BadArgumentException("config.topicEntities must not be empty (omit it to link the question)");
        }
        if (spans != null && spans.size() != given.size()) {
            throw new BadArgumentException("config.topicSpans must have one span per topic entity ("
                    + given.size() + "), got " + spans.size());
        }
        List<Topic> topics = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < given.size(); i++) {
            List<Node> nodes = linker.named(given.get(i));
            if (nodes.isEmpty()) {
                throw new BadArgumentException("config.topicEntities[" + i + "]: no entity with id or name '"
                        + given.get(i) + "' in KG '" + kg + "'");
            }
            for (Node node : nodes) {
                if (seen.add(node.getElementId())) {
                    topics.add(new Topic(node, spans != null ? spans.get(i) : given.get(i)));
                }
            }
        }
        return new Topics(topics, spans != null ? spans : given);
    }
}
