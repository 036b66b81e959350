package io.kgqa.procedures.util;

import java.util.ArrayList;
import java.util.List;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.ResourceIterator;
import org.neo4j.graphdb.Transaction;

/** The {@code topicIds} argument of the retrieval procedures: entity ids of one KG, checked one by one. */
public final class TopicEntities {

    private static final Label ENTITY = Label.label("Entity");

    private TopicEntities() {
    }

    /**
     * The {@code :Entity} nodes of KG {@code kg} with these ids, in order.
     *
     * @throws IllegalArgumentException naming the first id that is not a string or not an entity of {@code kg}
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
}
