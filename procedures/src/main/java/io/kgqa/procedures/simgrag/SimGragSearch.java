package io.kgqa.procedures.simgrag;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Transaction;

/**
 * One pattern matched against one KG: candidates from the vector indexes (or the caller's pins), then
 * {@link PatternMatcher} per connected component. What {@code kgqa.simgrag.match} and {@code retrieve} share.
 */
public final class SimGragSearch {

    public record Settings(int nodeCandidates, int relationCandidates, PatternMatcher.Options matcher) {
    }

    /** One match of one component, with the component's search statistics. */
    public record ComponentMatch(int component, int rank, PatternMatcher.Match<Node> match, long expansions,
                                 boolean exhaustive) {
    }

    private SimGragSearch() {
    }

    /**
     * @param pins known pattern nodes tied to given entities (distance from the node's text to each), instead
     *     of the vector search; a linker's entities, or a user's
     */
    public static List<ComponentMatch> run(Transaction tx, String kg, PatternGraph pattern,
                                           Map<String, List<Node>> pins, Settings settings) {
        Candidates candidates = new Candidates(tx, kg);
        Map<Integer, Map<Node, Double>> nodes = new HashMap<>();
        for (int i = 0; i < pattern.nodes.size(); i++) {
            PatternGraph.PatternNode node = pattern.nodes.get(i);
            if (node.variable()) {
                continue;
            }
            List<Node> pinned = pins.get(node.text());
            Map<Node, Double> found = new LinkedHashMap<>();
            if (pinned != null) {
                for (Node n : pinned) {
                    found.put(n, candidates.entityDistance(n, node.text()));
                }
            } else {
                found.putAll(candidates.entities(node.text(), settings.nodeCandidates()));
            }
            nodes.put(i, found);
        }
        Map<Integer, Map<String, Double>> relations = new HashMap<>();
        for (int e = 0; e < pattern.edges.size(); e++) {
            PatternGraph.Edge edge = pattern.edges.get(e);
            if (edge.wildcard()) {
                continue;
            }
            relations.put(e, edge.anyRelation() ? candidates.allRelations(edge.relation())
                    : candidates.relations(edge.relation(), settings.relationCandidates()));
        }
        List<ComponentMatch> out = new ArrayList<>();
        List<List<Integer>> components = pattern.components();
        for (int c = 0; c < components.size(); c++) {
            PatternMatcher<Node> matcher = new PatternMatcher<>(new Neo4jKgView(kg), pattern, nodes, relations,
                    settings.matcher());
            PatternMatcher.Result<Node> result = matcher.match(components.get(c));
            int rank = 1;
            for (PatternMatcher.Match<Node> m : result.matches()) {
                out.add(new ComponentMatch(c + 1, rank++, m, result.expansions(), result.exhaustive()));
            }
        }
        return out;
    }
}
