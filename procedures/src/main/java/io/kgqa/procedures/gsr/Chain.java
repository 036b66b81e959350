package io.kgqa.procedures.gsr;

import java.util.ArrayList;
import java.util.List;

/**
 * A generated relation chain: the steps to walk from the topic entity, and the chain's log-probability (its
 * tokens', end token included).
 */
public record Chain(List<Step> steps, double score) {

    /** One hop: a relationship type, walked along the KG's direction ({@code out}) or against it. */
    public record Step(String relation, boolean out) {

        public String direction() {
            return out ? "out" : "in";
        }
    }

    /** The chain as Cypher rows want it: {@code [[relation, "out" | "in"], …]}. */
    public List<List<String>> asLists() {
        List<List<String>> lists = new ArrayList<>(steps.size());
        for (Step step : steps) {
            lists.add(List.of(step.relation(), step.direction()));
        }
        return lists;
    }
}
