package io.kgqa.procedures.paths;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;

/**
 * The relation chains of one or two steps that can be walked from an entity, each step either way, no node
 * after the start being the start itself, and the second step never standing still.
 *
 * <p>Only the chains are wanted at question time (a scorer ranks them), not where they lead: the Cypher walk
 * that training uses ({@code paths/walkable}) gathers every end to count the answers among them, and took
 * 75-120 ms from a country of FB15k-237. This reads each middle entity once, however many first steps reach
 * it, and keeps only the steps it has.
 *
 * <p>The bounds are the training walk's, so that a question offers the scorer the chains it learned to choose
 * among: a first step reaching many middles (a hub's "contains") is followed from its first {@code maxVia}
 * middles in the order the store gives them, and a middle's first {@code fanout} relationships that lead on
 * are read.
 */
public final class WalkableChains {

    /** One step: a relationship type, walked along the KG's direction ({@code out}) or against it. */
    public record Step(String relation, boolean out) {

        public List<String> asList() {
            return List.of(relation, out ? "out" : "in");
        }

        /** The step as a chain key writes it (Python's {@code core.chains}): {@code rel>} or {@code rel<}. */
        public String token() {
            return relation + (out ? ">" : "<");
        }
    }

    private WalkableChains() {
    }

    /**
     * Every chain of one step, then of two, from {@code start}, in the order the store gives the
     * relationships.
     */
    public static List<List<Step>> from(Node start, int maxVia, int fanout) {
        Map<Step, Set<Node>> middles = new LinkedHashMap<>();
        for (Relationship r : start.getRelationships()) {
            Node middle = r.getOtherNode(start);
            if (!middle.equals(start)) {
                Step step = new Step(r.getType().name(), r.getStartNode().equals(start));
                middles.computeIfAbsent(step, s -> new LinkedHashSet<>()).add(middle);
            }
        }
        List<List<Step>> chains = new ArrayList<>();
        Map<Node, Set<Step>> stepsOf = new HashMap<>();  // a middle's steps do not depend on how it was reached
        Map<Step, Set<Step>> seconds = new HashMap<>();
        for (Map.Entry<Step, Set<Node>> first : middles.entrySet()) {
            chains.add(List.of(first.getKey()));
            Set<Step> next = seconds.computeIfAbsent(first.getKey(), s -> new LinkedHashSet<>());
            int via = 0;
            for (Node middle : first.getValue()) {
                if (via++ >= maxVia) {
                    break;
                }
                next.addAll(stepsOf.computeIfAbsent(middle, m -> onwardSteps(m, start, fanout)));
            }
        }
        for (Map.Entry<Step, Set<Node>> first : middles.entrySet()) {
            for (Step second : seconds.get(first.getKey())) {
                chains.add(List.of(first.getKey(), second));
            }
        }
        return chains;
    }

    /**
     * The steps from {@code middle} that reach a node other than it and {@code start}, among its first
     * {@code fanout} relationships that do (as the training walk reads them, so that a scorer is asked to
     * choose among the chains it learned to choose among).
     */
    private static Set<Step> onwardSteps(Node middle, Node start, int fanout) {
        Set<Step> steps = new LinkedHashSet<>();
        int read = 0;
        for (Relationship r : middle.getRelationships()) {
            Node end = r.getOtherNode(middle);
            if (!end.equals(start) && !end.equals(middle)) {
                steps.add(new Step(r.getType().name(), r.getStartNode().equals(middle)));
                if (++read >= fanout) {
                    break;
                }
            }
        }
        return steps;
    }
}
