package io.kgqa.procedures.subgraphrag;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which relations lead to each entity of a candidate subgraph: the path code that extends SubgraphRAG's
 * distance encoding.
 *
 * <p>Why: DDE tells how far an entity is from the topic, not by which relations. A film two steps out is
 * reached through the topic film's director or through its genre alike, so a scorer that sees distance only
 * cannot tell "the films of X's director" from "the films sharing X's genre".
 *
 * <p><b>Definition</b> (the same as the trainer's {@code kgqa.training.subgraphrag.paths.path_weights}). Over
 * the candidate triples taken as undirected edges, an entity at BFS distance d from the topic entities has as
 * parents its edges to entities at distance d - 1. Its code is the mean over its parent edges (one term per
 * triple) of the parent's code plus, when d &lt;= {@code steps}, a one-hot at (step d, the edge's direction,
 * its relation): direction 0 when the walk follows the triple (the parent is its head), 1 against it. Topic
 * entities and unreached entities have empty codes. A code is a weight per column
 * {@code (2·(step - 1) + direction) · relationCount + relation}; the scorer reads each (step, direction) slot
 * as its weighted mixture of relation vectors ({@link #expand}).
 *
 * <p>Pure: arrays in, sparse codes out. Cost O(levels · triples) time.
 */
public final class PathCodes {

    private PathCodes() {
    }

    /** One entity's code: parallel arrays of columns (ascending) and weights. */
    public record Code(int[] columns, double[] weights) {
        static final Code EMPTY = new Code(new int[0], new double[0]);
    }

    /** Slots (rows of relation mixtures) per entity: one per step and direction. */
    public static int slots(int steps) {
        return 2 * steps;
    }

    /**
     * @param nodeCount     nodes are 0 .. nodeCount-1
     * @param heads         head node of each triple
     * @param relations     relation index of each triple, 0 .. relationCount-1
     * @param tails         tail node of each triple
     * @param topic         whether each node is a topic entity
     * @param steps         how many first steps a code describes, at least 1
     * @param relationCount how many relation indexes there are
     */
    public static Code[] compute(int nodeCount, int[] heads, int[] relations, int[] tails, boolean[] topic,
                                 int steps, int relationCount) {
        if (heads.length != tails.length || heads.length != relations.length) {
            throw new IllegalArgumentException("heads, relations and tails differ in length: " + heads.length + ", "
                    + relations.length + ", " + tails.length);
        }
        if (topic.length != nodeCount) {
            throw new IllegalArgumentException("topic has " + topic.length + " entries for " + nodeCount + " nodes");
        }
        if (steps < 1) {
            throw new IllegalArgumentException("steps must be at least 1, got " + steps);
        }
        Code[] codes = new Code[nodeCount];
        Arrays.fill(codes, Code.EMPTY);
        int[] distance = new int[nodeCount];
        Arrays.fill(distance, -1);
        boolean[] near = new boolean[nodeCount];
        List<Integer> frontier = new ArrayList<>();
        for (int v = 0; v < nodeCount; v++) {
            if (topic[v]) {
                distance[v] = 0;
                frontier.add(v);
            }
        }
        for (int level = 1; !frontier.isEmpty(); level++) {
            Arrays.fill(near, false);
            for (int v : frontier) {
                near[v] = true;
            }
            Map<Integer, Map<Integer, Double>> sums = new HashMap<>();
            Map<Integer, Integer> counts = new HashMap<>();
            for (int e = 0; e < heads.length; e++) {
                int parent;
                int child;
                int direction;
                if (near[heads[e]] && distance[tails[e]] < 0) {
                    parent = heads[e];
                    child = tails[e];
                    direction = 0;
                } else if (near[tails[e]] && distance[heads[e]] < 0) {
                    parent = tails[e];
                    child = heads[e];
                    direction = 1;
                } else {
                    continue;
                }
                Map<Integer, Double> sum = sums.computeIfAbsent(child, c -> new HashMap<>());
                counts.merge(child, 1, Integer::sum);
                Code inherited = codes[parent];
                for (int i = 0; i < inherited.columns.length; i++) {
                    sum.merge(inherited.columns[i], inherited.weights[i], Double::sum);
                }
                if (level <= steps) {
                    sum.merge((2 * (level - 1) + direction) * relationCount + relations[e], 1.0, Double::sum);
                }
            }
            List<Integer> next = new ArrayList<>(sums.keySet());
            next.sort(null);
            for (int child : next) {
                Map<Integer, Double> sum = sums.get(child);
                double count = counts.get(child);
                int[] columns = sum.keySet().stream().mapToInt(Integer::intValue).sorted().toArray();
                double[] weights = new double[columns.length];
                for (int i = 0; i < columns.length; i++) {
                    weights[i] = sum.get(columns[i]) / count;
                }
                codes[child] = new Code(columns, weights);
                distance[child] = level;
            }
            frontier = next;
        }
        return codes;
    }

    /**
     * Appends the code's slots as the scorer reads them: for each (step, direction) slot, the weighted sum of
     * the relation vectors ({@code slots · dim} numbers; a null relation vector counts as zeros).
     */
    public static float[] expand(Code code, int steps, float[][] relationVectors, int dim) {
        float[] out = new float[slots(steps) * dim];
        int relationCount = relationVectors.length;
        for (int i = 0; i < code.columns.length; i++) {
            int slot = code.columns[i] / relationCount;
            float[] vector = relationVectors[code.columns[i] % relationCount];
            if (vector == null) {
                continue;
            }
            float weight = (float) code.weights[i];
            int base = slot * dim;
            for (int j = 0; j < dim; j++) {
                out[base + j] += weight * vector[j];
            }
        }
        return out;
    }
}
