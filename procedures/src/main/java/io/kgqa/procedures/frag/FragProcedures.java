package io.kgqa.procedures.frag;

import io.kgqa.procedures.util.KnowledgeGraphs;
import io.kgqa.procedures.util.Options;
import io.kgqa.procedures.linking.TopicEntities;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.neo4j.graphdb.Label;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.Transaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;

/**
 * The {@code kgqa.frag.*} namespace: FRAG's preprocessing inside the database.
 *
 * <p>{@code neighbourhood} is the bounded breadth-first neighbourhood that FRAG prunes with personalized
 * PageRank ({@code cypher_templates/frag/}). It ran as list-heavy Cypher before; MetaQA's 4-hop
 * neighbourhoods (thousands of nodes) made its membership tests the slowest step of a 3-hop question.
 */
public class FragProcedures {

    public static final int DEFAULT_HOPS = 2;
    public static final int MAX_HOPS = 6;
    public static final int DEFAULT_MAX_DEGREE = 200;
    public static final int DEFAULT_MAX_FANOUT = 5000;
    public static final int DEFAULT_MAX_NEW = 6000;
    public static final int DEFAULT_MAX_NODES = 12000;
    private static final int LIMIT = 10_000_000;

    private static final Label ENTITY = Label.label("Entity");
    public static final double DEFAULT_DAMPING = 0.85;
    public static final int DEFAULT_MAX_ITERATIONS = 20;
    public static final double DEFAULT_TOLERANCE = 1e-7;
    private static final Set<String> KEYS = Set.of("hops", "maxDegree", "maxFanout", "maxNew", "maxNodes",
            "keepNodes", "damping", "maxIterations", "tolerance");

    @Context
    public Transaction tx;

    /**
     * The one row of {@code kgqa.frag.neighbourhood}.
     *
     * @param nodes         topic entities first, then each layer in the order it was kept
     * @param expandable    per node: whether its relationships belong to the neighbourhood (not a hub, not the
     *                      last layer)
     * @param edges         each relationship once, as [start position, end position, type] into {@code nodes}
     * @param neighbourhood the size of the whole neighbourhood, before pruning
     * @param pruned        whether it had more than keepNodes nodes and was pruned by personalized PageRank
     * @param ppr           per kept node, its personalized PageRank (empty when not pruned)
     */
    public record Neighbourhood(List<Node> nodes, List<Boolean> expandable, List<List<Object>> edges,
                                long neighbourhood, boolean pruned, List<Double> ppr) {
    }

    @Procedure(name = "kgqa.frag.neighbourhood", mode = Mode.READ)
    @Description("kgqa.frag.neighbourhood(kg :: STRING, topicIds :: LIST<STRING>, config = {} :: MAP) :: (nodes"
            + " :: LIST<NODE>, expandable :: LIST<BOOLEAN>, edges :: LIST<LIST<ANY>>) - FRAG's bounded `hops`-hop"
            + " neighbourhood of the topic entities (Entity ids of KG kg), breadth first. A node other than a topic"
            + " entity with more than maxDegree relationships (a hub: a value thousands of entities share) joins but is not expanded;"
            + " an expanded node contributes at most maxFanout neighbours, a layer at most maxNew new nodes (those"
            + " with most relationships to the layer before first, ties in discovery order), the whole at most"
            + " maxNodes. One row: the nodes (topic entities first), whether each is expanded (the last layer and"
            + " hubs are not), and every relationship of an expanded node within the neighbourhood once, as"
            + " [start, end, type] positions into nodes. With keepNodes > 0 and a bigger neighbourhood, it is"
            + " pruned to the keepNodes nodes of highest personalized PageRank from the topic entities (the"
            + " semantics of gds.pageRank with sourceNodes on the undirected neighbourhood; damping,"
            + " maxIterations, tolerance): nodes are then the kept ones, best first, edges those between them,"
            + " and ppr their scores. config: hops (default 2, 1-6), maxDegree (200), maxFanout (5000), maxNew"
            + " (6000), maxNodes (12000), keepNodes (0: no pruning), damping (0.85), maxIterations (20),"
            + " tolerance (1e-7).")
    public Stream<Neighbourhood> neighbourhood(
            @Name("kg") String kg,
            @Name("topicIds") List<Object> topicIds,
            @Name(value = "config", defaultValue = "{}") Map<String, Object> config) {
        Options options = new Options(config, "config", KEYS);
        int hops = options.integer("hops", DEFAULT_HOPS, 1, MAX_HOPS);
        int maxDegree = options.integer("maxDegree", DEFAULT_MAX_DEGREE, 0, Integer.MAX_VALUE);
        int maxFanout = options.integer("maxFanout", DEFAULT_MAX_FANOUT, 1, LIMIT);
        int maxNew = options.integer("maxNew", DEFAULT_MAX_NEW, 1, LIMIT);
        int maxNodes = options.integer("maxNodes", DEFAULT_MAX_NODES, 1, LIMIT);
        int keepNodes = options.integer("keepNodes", 0, 0, LIMIT);
        double damping = options.number("damping", DEFAULT_DAMPING, 0.0, 0.999);
        int maxIterations = options.integer("maxIterations", DEFAULT_MAX_ITERATIONS, 1, LIMIT);
        double tolerance = options.number("tolerance", DEFAULT_TOLERANCE, 0.0, 1.0);
        List<Node> topics = TopicEntities.byIds(tx, KnowledgeGraphs.require(tx, kg, "kg"), topicIds);
        Neighbourhood whole = expand(kg, topics, hops, maxDegree, maxFanout, maxNew, maxNodes);
        if (keepNodes == 0 || whole.nodes().size() <= keepNodes) {
            return Stream.of(whole);
        }
        int distinctTopics = new HashSet<>(topics).size();  // the first nodes of the neighbourhood
        return Stream.of(prune(whole, distinctTopics, keepNodes, damping, maxIterations, tolerance));
    }

    /** The keepNodes nodes of highest personalized PageRank from the topic entities (the first nodes). */
    private static Neighbourhood prune(Neighbourhood whole, int topicCount, int keepNodes, double damping,
                                       int maxIterations, double tolerance) {
        int n = whole.nodes().size();
        int[] from = new int[whole.edges().size()];
        int[] to = new int[whole.edges().size()];
        for (int i = 0; i < from.length; i++) {
            from[i] = ((Long) whole.edges().get(i).get(0)).intValue();
            to[i] = ((Long) whole.edges().get(i).get(1)).intValue();
        }
        int[] sources = new int[Math.min(topicCount, n)];
        for (int i = 0; i < sources.length; i++) {
            sources[i] = i;
        }
        double[] scores = PersonalizedPageRank.scores(n, from, to, sources, damping, maxIterations, tolerance);
        int[] kept = PersonalizedPageRank.top(scores, keepNodes);
        int[] position = new int[n];
        Arrays.fill(position, -1);
        List<Node> nodes = new ArrayList<>(kept.length);
        List<Boolean> expandable = new ArrayList<>(kept.length);
        List<Double> ppr = new ArrayList<>(kept.length);
        for (int i = 0; i < kept.length; i++) {
            position[kept[i]] = i;
            nodes.add(whole.nodes().get(kept[i]));
            expandable.add(whole.expandable().get(kept[i]));
            ppr.add(scores[kept[i]]);
        }
        List<List<Object>> edges = new ArrayList<>();
        for (int i = 0; i < from.length; i++) {
            if (position[from[i]] >= 0 && position[to[i]] >= 0) {
                edges.add(List.of((long) position[from[i]], (long) position[to[i]], whole.edges().get(i).get(2)));
            }
        }
        return new Neighbourhood(nodes, expandable, edges, n, true, ppr);
    }

    @SuppressWarnings({"deprecation", "removal"}) // getId(): a cheap per-transaction key for the membership sets
    private static Neighbourhood expand(String kg, List<Node> topics, int hops, int maxDegree, int maxFanout,
                                        int maxNew, int maxNodes) {
        List<Node> reached = new ArrayList<>();
        Map<Long, Integer> position = new HashMap<>();
        Set<Long> topicSet = new HashSet<>();
        for (Node topic : topics) {
            if (position.putIfAbsent(topic.getId(), reached.size()) == null) {
                reached.add(topic);
                topicSet.add(topic.getId());
            }
        }
        Set<Long> rejected = new HashSet<>();
        List<Node> frontier = new ArrayList<>(reached);
        Set<Long> frontierSet = new HashSet<>(topicSet);
        Set<Long> previousSet = new HashSet<>();
        for (int hop = 0; hop < hops && !frontier.isEmpty(); hop++) {
            // How often each neighbour is touched from this layer, in discovery order.
            LinkedHashMap<Long, Touched> touched = new LinkedHashMap<>();
            for (Node node : frontier) {
                if (!expandable(node, topicSet, maxDegree)) {
                    continue;
                }
                int read = 0;
                for (Relationship relationship : node.getRelationships()) {
                    if (read++ >= maxFanout) {
                        break;
                    }
                    Node other = relationship.getOtherNode(node);
                    long id = other.getId();
                    if (frontierSet.contains(id) || previousSet.contains(id) || rejected.contains(id)) {
                        continue;
                    }
                    Touched entry = touched.get(id);
                    if (entry == null) {
                        if (!isEntityOf(other, kg)) {
                            rejected.add(id);
                            continue;
                        }
                        touched.put(id, new Touched(other, touched.size()));
                    } else {
                        entry.count++;
                    }
                }
            }
            List<Touched> found = new ArrayList<>(touched.values());
            found.sort((a, b) -> a.count != b.count ? Integer.compare(b.count, a.count)
                    : Integer.compare(a.order, b.order));
            int room = Math.min(maxNew, maxNodes - reached.size());
            List<Node> next = new ArrayList<>();
            for (Touched entry : found) {
                if (next.size() >= room) {
                    break;
                }
                if (position.putIfAbsent(entry.node.getId(), reached.size()) == null) {
                    reached.add(entry.node);
                    next.add(entry.node);
                }
            }
            previousSet = frontierSet;
            frontier = next;
            frontierSet = new HashSet<>();
            for (Node node : next) {
                frontierSet.add(node.getId());
            }
        }

        List<Boolean> expandable = new ArrayList<>(reached.size());
        Set<Long> expandedSet = new HashSet<>();
        for (Node node : reached) {
            boolean expanded = !frontierSet.contains(node.getId()) && expandable(node, topicSet, maxDegree);
            expandable.add(expanded);
            if (expanded) {
                expandedSet.add(node.getId());
            }
        }
        List<List<Object>> edges = new ArrayList<>();
        for (int a = 0; a < reached.size(); a++) {
            if (!expandable.get(a)) {
                continue;
            }
            Node node = reached.get(a);
            for (Relationship relationship : node.getRelationships()) {
                Node other = relationship.getOtherNode(node);
                Integer b = position.get(other.getId());
                // Each relationship once: from its expanded end, or from the lower id of two expanded ends.
                if (b == null || (expandedSet.contains(other.getId()) && other.getId() <= node.getId())) {
                    continue;
                }
                boolean outgoing = relationship.getStartNode().getId() == node.getId();
                edges.add(List.of((long) (outgoing ? a : b), (long) (outgoing ? b : a), relationship.getType().name()));
            }
        }
        return new Neighbourhood(reached, expandable, edges, reached.size(), false, List.of());
    }

    private static boolean expandable(Node node, Set<Long> topics, int maxDegree) {
        @SuppressWarnings({"deprecation", "removal"})
        long id = node.getId();
        return topics.contains(id) || node.getDegree() <= maxDegree;
    }

    private static boolean isEntityOf(Node node, String kg) {
        return node.hasLabel(ENTITY) && kg.equals(node.getProperty("kg", null));
    }

    /** A neighbour of the current layer: how many relationships reach it, and when it was first seen. */
    private static final class Touched {
        final Node node;
        final int order;
        int count = 1;

        Touched(Node node, int order) {
            this.node = node;
            this.order = order;
        }
    }
}
