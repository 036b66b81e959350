package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.util.BadArgumentException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A SimGRAG pattern graph: edges (head, relation, tail) between named pattern nodes. A node whose text starts
 * with {@code UNKNOWN} (any case) or {@code ?} is a variable and costs nothing; any other node is an entity
 * mention matched to KG entities by embedding distance. A relation written {@code UNKNOWN} or {@code ?} matches
 * any relation at no cost; {@link Edge#anyRelation} marks an edge whose relation text ranks every relation
 * (no nearest-k restriction), which the offline builder uses when it is unsure of the relation.
 */
public final class PatternGraph {

    public record Edge(int head, String relation, int tail, boolean wildcard, boolean anyRelation) {
    }

    public record PatternNode(String text, boolean variable) {
    }

    public final List<PatternNode> nodes;
    public final List<Edge> edges;

    private PatternGraph(List<PatternNode> nodes, List<Edge> edges) {
        this.nodes = List.copyOf(nodes);
        this.edges = List.copyOf(edges);
    }

    public static boolean isVariable(String text) {
        String t = text.strip();
        return t.startsWith("?") || t.toUpperCase(Locale.ROOT).startsWith("UNKNOWN");
    }

    /** One edge as the user or a pattern source wrote it. */
    public record RawEdge(String head, String relation, String tail, boolean anyRelation) {
        public RawEdge(String head, String relation, String tail) {
            this(head, relation, tail, false);
        }
    }

    /**
     * Validates and indexes {@code raw}; every error names the edge (1-based) and what is wrong with it.
     *
     * @param maxEdges more edges than this is an error (the search is exponential in the pattern size)
     */
    public static PatternGraph of(List<RawEdge> raw, int maxEdges) {
        if (raw == null || raw.isEmpty()) {
            throw new BadArgumentException("pattern must have at least one edge [head, relation, tail]");
        }
        if (raw.size() > maxEdges) {
            throw new BadArgumentException("pattern has " + raw.size() + " edges; at most " + maxEdges
                    + " are allowed (config.maxEdges)");
        }
        Map<String, Integer> index = new LinkedHashMap<>();
        List<PatternNode> nodes = new ArrayList<>();
        List<Edge> edges = new ArrayList<>();
        for (int i = 0; i < raw.size(); i++) {
            RawEdge e = raw.get(i);
            String where = "pattern edge " + (i + 1) + " " + show(e);
            if (e.head() == null || e.head().isBlank() || e.tail() == null || e.tail().isBlank()) {
                throw new BadArgumentException(where + ": a relation needs a head and a tail node");
            }
            if (e.relation() == null || e.relation().isBlank()) {
                throw new BadArgumentException(where + ": the relation is empty (write UNKNOWN for any relation)");
            }
            String head = e.head().strip();
            String tail = e.tail().strip();
            if (head.equals(tail)) {
                throw new BadArgumentException(where + ": a self-loop (head and tail are the same node) is not"
                        + " supported");
            }
            int h = index.computeIfAbsent(head, t -> {
                nodes.add(new PatternNode(t, isVariable(t)));
                return nodes.size() - 1;
            });
            int t = index.computeIfAbsent(tail, x -> {
                nodes.add(new PatternNode(x, isVariable(x)));
                return nodes.size() - 1;
            });
            String relation = e.relation().strip();
            edges.add(new Edge(h, relation, t, isVariable(relation), e.anyRelation()));
        }
        return new PatternGraph(nodes, edges);
    }

    static String show(RawEdge e) {
        return "[" + e.head() + ", " + e.relation() + ", " + e.tail() + "]";
    }

    public String show(Edge e) {
        return "[" + nodes.get(e.head()).text() + ", " + e.relation() + ", " + nodes.get(e.tail()).text() + "]";
    }

    /** The connected components, each a list of edge indexes in input order; SimGRAG matches each on its own. */
    public List<List<Integer>> components() {
        int[] parent = new int[nodes.size()];
        for (int i = 0; i < parent.length; i++) {
            parent[i] = i;
        }
        for (Edge e : edges) {
            parent[find(parent, e.head())] = find(parent, e.tail());
        }
        Map<Integer, List<Integer>> byRoot = new LinkedHashMap<>();
        for (int i = 0; i < edges.size(); i++) {
            byRoot.computeIfAbsent(find(parent, edges.get(i).head()), r -> new ArrayList<>()).add(i);
        }
        return new ArrayList<>(byRoot.values());
    }

    private static int find(int[] parent, int x) {
        while (parent[x] != x) {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    }
}
