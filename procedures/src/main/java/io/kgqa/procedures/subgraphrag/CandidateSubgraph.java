package io.kgqa.procedures.subgraphrag;

import io.kgqa.procedures.util.BadArgumentException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.neo4j.graphdb.Direction;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.logging.Log;

/**
 * The candidate triples of one question: every relationship within {@code hops} undirected hops of
 * the topic entities, in breadth-first order, restricted to {@code :Entity} nodes of one KG.
 *
 * <p><b>Which triples.</b> A breadth-first search from the topic entities over relationships in either
 * direction. A triple is a candidate when one of its ends is at distance {@code < hops}, so its other end
 * is at distance {@code <= hops}: exactly the triples on walks of at most {@code hops} edges from a topic
 * entity. (A triple between two nodes both at distance {@code hops} would be hop {@code hops + 1}.)
 *
 * <p><b>Order and the cap.</b> Nodes are expanded in BFS order (topic entities in the given order, then
 * each layer in discovery order) and each node's relationships in the store's order, which is
 * deterministic for a given database. The first {@code maxCandidates} distinct triples are kept; if
 * there are more, {@link #truncated} is set and the rest are dropped, so the nearest triples survive.
 *
 * <p>Not thread-safe; lives for one procedure call inside its transaction.
 */
public final class CandidateSubgraph {

    public static final Label ENTITY = Label.label("Entity");

    /** Nodes of the subgraph; the index in this list is the node's id in the edge arrays. */
    public final List<Node> nodes;
    /** BFS hop distance of each node from the nearest topic entity. */
    public final int[] distance;
    /** Whether each node is a topic entity. */
    public final boolean[] topic;
    /** Per candidate triple: head node index, tail node index, relationship (for type and properties). */
    public final int[] heads;
    public final int[] tails;
    public final List<Relationship> relationships;
    /** True when more than maxCandidates triples were within reach and the tail of the BFS was dropped. */
    public final boolean truncated;

    private CandidateSubgraph(List<Node> nodes, int[] distance, boolean[] topic, int[] heads, int[] tails,
                              List<Relationship> relationships, boolean truncated) {
        this.nodes = nodes;
        this.distance = distance;
        this.topic = topic;
        this.heads = heads;
        this.tails = tails;
        this.relationships = relationships;
        this.truncated = truncated;
    }

    public int size() {
        return heads.length;
    }

    /**
     * Collects the candidates.
     *
     * @param kg only {@code :Entity} nodes whose {@code kg} property equals this are entered
     * @param topics the topic entities (already checked to be entities of {@code kg}); duplicates ignored
     */
    @SuppressWarnings({"deprecation", "removal"}) // getId(): a dense per-transaction key, far cheaper than elementId strings
    public static CandidateSubgraph collect(String kg, List<Node> topics, int hops, int maxCandidates) {
        List<Node> nodes = new ArrayList<>();
        Map<Long, Integer> index = new HashMap<>();
        Set<Long> rejected = new HashSet<>();
        int[] distance = new int[16];
        List<Integer> topicIndexes = new ArrayList<>();
        for (Node topicNode : topics) {
            if (index.putIfAbsent(topicNode.getId(), nodes.size()) == null) {
                distance = ensure(distance, nodes.size());
                distance[nodes.size()] = 0;
                topicIndexes.add(nodes.size());
                nodes.add(topicNode);
            }
        }

        Set<Long> seenRelationships = new HashSet<>();
        int[] heads = new int[64];
        int[] tails = new int[64];
        List<Relationship> relationships = new ArrayList<>();
        boolean truncated = false;

        expand:
        for (int cursor = 0; cursor < nodes.size(); cursor++) {
            if (distance[cursor] >= hops) {
                break; // BFS order: every later node is at least this far
            }
            Node node = nodes.get(cursor);
            for (Relationship relationship : node.getRelationships(Direction.BOTH)) {
                long relationshipId = relationship.getId();
                if (seenRelationships.contains(relationshipId)) {
                    continue;
                }
                Node other = relationship.getOtherNode(node);
                long otherId = other.getId();
                Integer otherIndex = index.get(otherId);
                if (otherIndex == null) {
                    if (rejected.contains(otherId)) {
                        continue;
                    }
                    if (!other.hasLabel(ENTITY) || !kg.equals(other.getProperty("kg", null))) {
                        rejected.add(otherId);
                        continue;
                    }
                }
                if (relationships.size() >= maxCandidates) {
                    truncated = true;
                    break expand;
                }
                if (otherIndex == null) {
                    otherIndex = nodes.size();
                    index.put(otherId, otherIndex);
                    distance = ensure(distance, otherIndex);
                    distance[otherIndex] = distance[cursor] + 1;
                    nodes.add(other);
                }
                seenRelationships.add(relationshipId);
                int count = relationships.size();
                heads = ensure(heads, count);
                tails = ensure(tails, count);
                boolean outgoing = relationship.getStartNode().getId() == node.getId();
                heads[count] = outgoing ? cursor : otherIndex;
                tails[count] = outgoing ? otherIndex : cursor;
                relationships.add(relationship);
            }
        }

        boolean[] topic = new boolean[nodes.size()];
        for (int t : topicIndexes) {
            topic[t] = true;
        }
        int count = relationships.size();
        return new CandidateSubgraph(nodes, Arrays.copyOf(distance, nodes.size()), topic,
                Arrays.copyOf(heads, count), Arrays.copyOf(tails, count), relationships, truncated);
    }

    /**
     * {@link #collect}, with the cap enforced as the caller chose: a cut subgraph is an error with {@code
     * failOnTruncation}, else a warning in the server's log (a retriever should still answer from the nearest
     * triples; a caller who counts on every triple asks to be told).
     *
     * @param log where the warning goes; may be null
     */
    public static CandidateSubgraph collect(String kg, List<Node> topics, int hops, int maxCandidates,
                                            boolean failOnTruncation, Log log) {
        CandidateSubgraph subgraph = collect(kg, topics, hops, maxCandidates);
        if (subgraph.truncated) {
            String message = "more than " + maxCandidates + " candidate triples within " + hops + " hops of "
                    + topics.size() + " topic entities in KG '" + kg + "'";
            if (failOnTruncation) {
                throw new BadArgumentException("config.maxCandidates: " + message
                        + "; raise maxCandidates or lower hops");
            }
            if (log != null) {
                log.warn("kgqa.subgraphrag: " + message + "; kept the first " + maxCandidates
                        + " in breadth-first order (config.maxCandidates)");
            }
        }
        return subgraph;
    }

    /** Entity DDE codes of this subgraph's nodes. */
    public double[][] entityCodes(int forwardRounds, int reverseRounds, boolean includeSeed) {
        return Dde.entityCodes(nodes.size(), heads, tails, topic, forwardRounds, reverseRounds, includeSeed);
    }

    private static int[] ensure(int[] array, int index) {
        return index < array.length ? array : Arrays.copyOf(array, Math.max(index + 1, array.length * 2));
    }
}
