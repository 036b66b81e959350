package io.kgqa.procedures.frag;

import java.util.Arrays;

/**
 * Personalized PageRank over an undirected edge list, with the semantics of {@code gds.pageRank} with
 * {@code sourceNodes} on an undirected projection: a node's score is {@code (1 - d)} if it is a source, plus
 * {@code d} times the sum over its relationships of the other end's score divided by that end's degree;
 * iteration starts from {@code 1 - d} on the sources and stops when no score moves by more than the
 * tolerance, or after {@code maxIterations}. Parallel relationships count once each, as in GDS.
 *
 * <p>Why not GDS itself: FRAG prunes a new neighbourhood for every question, and projecting it into the GDS
 * catalog cost 50-150 ms on MetaQA's 4-hop neighbourhoods against a few ms for the iteration itself here.
 * {@code tests/test_frag_metaqa.py} checks that both keep the same nodes.
 *
 * <p>Pure: arrays in, scores out.
 */
public final class PersonalizedPageRank {

    private PersonalizedPageRank() {
    }

    /**
     * @param nodeCount     nodes are 0 .. nodeCount - 1
     * @param from          one end of each relationship
     * @param to            the other end
     * @param sources       the personalisation (restart) nodes
     * @param damping       in [0, 1)
     * @param maxIterations at least 1
     * @param tolerance     stop when no score changes by more
     * @return the score of every node
     */
    public static double[] scores(int nodeCount, int[] from, int[] to, int[] sources, double damping,
                                  int maxIterations, double tolerance) {
        if (from.length != to.length) {
            throw new IllegalArgumentException("from and to differ in length: " + from.length + ", " + to.length);
        }
        if (!(damping >= 0 && damping < 1) || maxIterations < 1 || !(tolerance >= 0)) {
            throw new IllegalArgumentException("damping must be in [0, 1), maxIterations at least 1 and tolerance"
                    + " at least 0; got " + damping + ", " + maxIterations + ", " + tolerance);
        }
        int[] degree = new int[nodeCount];
        for (int i = 0; i < from.length; i++) {
            degree[from[i]]++;
            degree[to[i]]++;
        }
        double[] restart = new double[nodeCount];
        for (int source : sources) {
            restart[source] = 1 - damping;
        }
        double[] score = restart.clone();
        double[] next = new double[nodeCount];
        for (int iteration = 0; iteration < maxIterations; iteration++) {
            System.arraycopy(restart, 0, next, 0, nodeCount);
            for (int i = 0; i < from.length; i++) {
                int a = from[i];
                int b = to[i];
                next[b] += damping * score[a] / degree[a];
                next[a] += damping * score[b] / degree[b];
            }
            double change = 0;
            for (int v = 0; v < nodeCount; v++) {
                change = Math.max(change, Math.abs(next[v] - score[v]));
            }
            double[] swap = score;
            score = next;
            next = swap;
            if (change <= tolerance) {
                break;
            }
        }
        return score;
    }

    /** The {@code keep} best nodes, highest score first (ties: lower index first). */
    public static int[] top(double[] scores, int keep) {
        Integer[] order = new Integer[scores.length];
        Arrays.setAll(order, i -> i);
        Arrays.sort(order, (a, b) -> scores[a] != scores[b] ? Double.compare(scores[b], scores[a])
                : Integer.compare(a, b));
        int count = Math.min(keep, order.length);
        int[] best = new int[count];
        for (int i = 0; i < count; i++) {
            best[i] = order[i];
        }
        return best;
    }
}
