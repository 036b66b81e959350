package io.kgqa.procedures.simgrag;

import io.kgqa.procedures.util.BadArgumentException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * SimGRAG's top-k pattern matching by Graph Semantic Distance (the paper's Algorithm 1), on one connected
 * component of a pattern.
 *
 * <p>The cost of a match is the sum of the distances of its matched known nodes and relations (variables and
 * wildcard relations cost 0). The search binds the known node with the fewest candidates first, then follows
 * the pattern's edges in depth-first order (higher-degree pattern nodes first), trying the cheapest extensions
 * first. With pruning on, a branch stops once its cost plus a lower bound on the edges still to match (each
 * edge's cheapest candidate relation, plus the cheapest candidate of the node it binds) exceeds the k-th best
 * cost found so far. Distinct pattern nodes bind distinct KG nodes when {@code injective} (subgraph
 * isomorphism, as the paper defines it); matches that tie with the k-th best are kept (up to
 * {@code maxMatches}), because on a KG many answers share one distance and dropping some would be arbitrary.
 */
public final class PatternMatcher<N> {

    /** What a pattern node or relation costs when any KG node or relation may match it. */
    private static final Double FREE = 0.0;

    public record Options(int k, boolean directed, boolean injective, boolean prune, boolean ties, int maxMatches,
                          long maxExpansions) {
        public Options {
            if (k < 1) {
                throw new IllegalArgumentException("k must be > 0, got " + k);
            }
        }
    }

    public record MatchedEdge<N>(N head, String type, N tail) {
    }

    public record Match<N>(double cost, List<N> binding, List<MatchedEdge<N>> edges) {
    }

    public record Result<N>(List<Match<N>> matches, long expansions, boolean exhaustive) {
    }

    private static final double EPS = 1e-9;

    /** One step of the search: match pattern edge {@code edge} from the already bound pattern node {@code from}. */
    private record Step(int edge, int from, int to, boolean forward, boolean bindsNew) {
    }

    private final KgView<N> kg;
    private final PatternGraph pattern;
    private final Map<Integer, Map<N, Double>> nodeCandidates;
    private final Map<Integer, Map<String, Double>> relationCandidates;
    private final Options options;

    private List<Step> steps;
    private double[] lowerBound;
    private Object[] binding;
    private final Set<N> used = new HashSet<>();
    private final List<MatchedEdge<N>> matched = new ArrayList<>();
    private final List<Match<N>> best = new ArrayList<>();
    private long expansions;
    private boolean exhaustive = true;

    /**
     * @param nodeCandidates per known pattern node: its candidate KG nodes and their distances
     * @param relationCandidates per edge index: candidate relation types and their distances; absent for a
     *     wildcard relation; for an {@code anyRelation} edge, the distance of every relation of the KG
     */
    public PatternMatcher(KgView<N> kg, PatternGraph pattern, Map<Integer, Map<N, Double>> nodeCandidates,
                          Map<Integer, Map<String, Double>> relationCandidates, Options options) {
        this.kg = kg;
        this.pattern = pattern;
        this.nodeCandidates = nodeCandidates;
        this.relationCandidates = relationCandidates;
        this.options = options;
    }

    /** The top-k matches of the component made of {@code edgeIndexes}, best (lowest cost) first. */
    public Result<N> match(List<Integer> edgeIndexes) {
        int root = chooseRoot(edgeIndexes);
        steps = order(edgeIndexes, root);
        lowerBound = new double[steps.size() + 1];
        for (int i = steps.size() - 1; i >= 0; i--) {
            Step s = steps.get(i);
            lowerBound[i] = lowerBound[i + 1] + cheapestRelation(s.edge()) + (s.bindsNew() ? cheapestNode(s.to()) : 0);
        }
        binding = new Object[pattern.nodes.size()];
        List<Map.Entry<N, Double>> seeds = new ArrayList<>(nodeCandidates.get(root).entrySet());
        seeds.sort(Map.Entry.<N, Double>comparingByValue().thenComparing(e -> kg.key(e.getKey())));
        for (Map.Entry<N, Double> seed : seeds) {
            if (options.prune() && pruned(seed.getValue() + lowerBound[0])) {
                break;
            }
            if (!budgetLeft()) {
                break;
            }
            expansions++;
            bind(root, seed.getKey());
            extend(0, seed.getValue());
            unbind(root, seed.getKey());
        }
        return new Result<>(List.copyOf(best), expansions, exhaustive);
    }

    private int chooseRoot(List<Integer> edgeIndexes) {
        int root = -1;
        int fewest = Integer.MAX_VALUE;
        for (int e : edgeIndexes) {
            PatternGraph.Edge edge = pattern.edges.get(e);
            for (int node : new int[] {edge.head(), edge.tail()}) {
                Map<N, Double> candidates = nodeCandidates.get(node);
                if (!pattern.nodes.get(node).variable() && candidates != null && candidates.size() < fewest) {
                    fewest = candidates.size();
                    root = node;
                }
            }
        }
        if (root < 0) {
            PatternGraph.Edge first = pattern.edges.get(edgeIndexes.get(0));
            throw new BadArgumentException("pattern edge " + (edgeIndexes.get(0) + 1) + " " + pattern.show(first)
                    + ": its part of the pattern has no known entity to start from (only UNKNOWN nodes)");
        }
        return root;
    }

    /** Depth-first edge order from the root; among a node's unvisited edges, those to higher-degree nodes first. */
    private List<Step> order(List<Integer> edgeIndexes, int root) {
        Map<Integer, List<Integer>> incident = new LinkedHashMap<>();
        for (int e : edgeIndexes) {
            PatternGraph.Edge edge = pattern.edges.get(e);
            incident.computeIfAbsent(edge.head(), x -> new ArrayList<>()).add(e);
            incident.computeIfAbsent(edge.tail(), x -> new ArrayList<>()).add(e);
        }
        List<Step> out = new ArrayList<>();
        Set<Integer> seenEdges = new HashSet<>();
        Set<Integer> bound = new HashSet<>(Set.of(root));
        visit(root, incident, seenEdges, bound, out);
        return out;
    }

    private void visit(int node, Map<Integer, List<Integer>> incident, Set<Integer> seenEdges, Set<Integer> bound,
                       List<Step> out) {
        List<Integer> edges = new ArrayList<>(incident.get(node));
        edges.sort(Comparator.comparingInt((Integer e) -> -incident.get(other(e, node)).size()).thenComparingInt(e -> e));
        for (int e : edges) {
            if (!seenEdges.add(e)) {
                continue;
            }
            int next = other(e, node);
            boolean bindsNew = bound.add(next);
            out.add(new Step(e, node, next, pattern.edges.get(e).head() == node, bindsNew));
            if (bindsNew) {
                visit(next, incident, seenEdges, bound, out);
            }
        }
    }

    private int other(int edge, int node) {
        PatternGraph.Edge e = pattern.edges.get(edge);
        return e.head() == node ? e.tail() : e.head();
    }

    private double cheapestRelation(int edge) {
        Map<String, Double> candidates = relationCandidates.get(edge);
        return candidates == null || candidates.isEmpty() ? 0 : candidates.values().stream().min(Double::compare).get();
    }

    private double cheapestNode(int node) {
        Map<N, Double> candidates = nodeCandidates.get(node);
        return pattern.nodes.get(node).variable() || candidates == null || candidates.isEmpty()
                ? 0 : candidates.values().stream().min(Double::compare).get();
    }

    private record Extension<N>(String type, N other, boolean outgoing, double cost) {
    }

    /** What matching {@code key} costs: 0 without candidates (anything matches), null when it is none of them. */
    private static <K> Double cost(Map<K, Double> candidates, K key) {
        return candidates == null ? FREE : candidates.get(key);
    }

    @SuppressWarnings("unchecked")
    private void extend(int stepIndex, double cost) {
        if (stepIndex == steps.size()) {
            record(cost);
            return;
        }
        Step step = steps.get(stepIndex);
        PatternGraph.Edge edge = pattern.edges.get(step.edge());
        N from = (N) binding[step.from()];
        N boundTo = (N) binding[step.to()];
        Map<String, Double> relations = relationCandidates.get(step.edge());
        boolean restrictTypes = relations != null && !edge.anyRelation();
        Map<N, Double> nodes = pattern.nodes.get(step.to()).variable() ? null : nodeCandidates.get(step.to());

        List<Extension<N>> options = new ArrayList<>();
        kg.forEachHop(from, restrictTypes ? relations.keySet() : null, hop -> {
            if (this.options.directed() && hop.outgoing() != step.forward()) {
                return;
            }
            Double relationCost = cost(relations, hop.type());
            if (relationCost == null) {
                return;
            }
            double nodeCost;
            if (boundTo != null) {
                if (!boundTo.equals(hop.other())) {
                    return;
                }
                nodeCost = 0;
            } else {
                if (this.options.injective() && used.contains(hop.other())) {
                    return;
                }
                Double d = cost(nodes, hop.other());
                if (d == null) {
                    return;
                }
                nodeCost = d;
            }
            options.add(new Extension<>(hop.type(), hop.other(), hop.outgoing(), cost + relationCost + nodeCost));
        });
        options.sort(Comparator.comparingDouble((Extension<N> x) -> x.cost()).thenComparing(x -> x.type())
                .thenComparing(x -> kg.key(x.other())));
        for (Extension<N> x : options) {
            if (this.options.prune() && pruned(x.cost() + lowerBound[stepIndex + 1])) {
                break;
            }
            if (!budgetLeft()) {
                return;
            }
            expansions++;
            boolean fresh = boundTo == null;
            if (fresh) {
                bind(step.to(), x.other());
            }
            matched.add(x.outgoing() ? new MatchedEdge<>(from, x.type(), x.other())
                    : new MatchedEdge<>(x.other(), x.type(), from));
            extend(stepIndex + 1, x.cost());
            matched.remove(matched.size() - 1);
            if (fresh) {
                unbind(step.to(), x.other());
            }
        }
    }

    private boolean budgetLeft() {
        if (expansions >= options.maxExpansions()) {
            exhaustive = false;
            return false;
        }
        return true;
    }

    private void bind(int node, N kgNode) {
        binding[node] = kgNode;
        used.add(kgNode);
    }

    private void unbind(int node, N kgNode) {
        binding[node] = null;
        used.remove(kgNode);
    }

    /** Whether no match of at least this cost can still enter the results. */
    private boolean pruned(double lowest) {
        if (best.size() < options.k()) {
            return false;
        }
        double kth = best.get(options.k() - 1).cost();
        if (!options.ties() || best.size() >= options.maxMatches()) {
            return lowest >= kth - EPS;
        }
        return lowest > kth + EPS;
    }

    @SuppressWarnings("unchecked")
    private void record(double cost) {
        List<N> nodes = new ArrayList<>(binding.length);
        for (Object o : binding) {
            nodes.add((N) o);
        }
        Match<N> match = new Match<>(cost, nodes, List.copyOf(matched));
        int at = 0;
        while (at < best.size() && compare(best.get(at), match) <= 0) {
            at++;
        }
        best.add(at, match);
        int keep = best.size();
        if (best.size() > options.k()) {
            double kth = best.get(options.k() - 1).cost();
            keep = options.k();
            if (options.ties()) {
                while (keep < best.size() && best.get(keep).cost() <= kth + EPS) {
                    keep++;
                }
            }
        }
        keep = Math.min(keep, Math.max(options.k(), options.maxMatches()));
        while (best.size() > keep) {
            best.remove(best.size() - 1);
        }
    }

    /** Lower cost first; ties in a fixed order (the bound nodes' keys), so pruning never changes the order. */
    private int compare(Match<N> a, Match<N> b) {
        int byCost = Double.compare(a.cost(), b.cost());
        if (Math.abs(a.cost() - b.cost()) > EPS && byCost != 0) {
            return byCost;
        }
        return Arrays.compare(keys(a), keys(b));
    }

    private String[] keys(Match<N> m) {
        String[] out = new String[m.binding().size() + m.edges().size()];
        for (int i = 0; i < m.binding().size(); i++) {
            N n = m.binding().get(i);
            out[i] = n == null ? "" : kg.key(n);
        }
        for (int i = 0; i < m.edges().size(); i++) {
            out[m.binding().size() + i] = m.edges().get(i).type();
        }
        return out;
    }
}
