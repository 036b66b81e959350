package io.kgqa.procedures.subgraphrag;

/**
 * SubgraphRAG's directional distance encoding (DDE), over a candidate subgraph held as edge arrays.
 * Pure and stateless: the procedures and the unit tests share it, and so do training (through
 * {@code kgqa.subgraphrag.candidates}) and inference ({@code kgqa.subgraphrag.retrieve}).
 *
 * <p><b>Definition.</b> {@code s0(v)} is the one-hot {@code [not-topic, topic]}. Forward rounds:
 * {@code f0 = s0}, {@code f(t+1)(v)} = the mean of {@code f(t)(u)} over the edges {@code u → v}
 * (the in-edges of v). Reverse rounds: {@code r0 = s0}, {@code r(t+1)(v)} = the mean of
 * {@code r(t)(u)} over the edges {@code v → u} (the out-edges). A node with no such edge gets zeros
 * for that round. The entity code is {@code [s0 (optional)] ‖ f1 ‖ … ‖ fF ‖ r1 ‖ … ‖ rR}, 2 numbers
 * per part; a triple's code is {@code [code(head) ‖ code(tail)]}.
 *
 * <p><b>Multi-edges.</b> The mean is taken per edge, as in SubgraphRAG's PyG implementation
 * ({@code MessagePassing(aggr='mean')} over the triple list): if u reaches v through two triples,
 * u's vector counts twice. A self-loop {@code v → v} makes v its own in- and out-neighbour.
 *
 * <p>Cost: O((F + R) · (n + e)) time, O(n) extra memory per round.
 */
public final class Dde {

    public static final int DEFAULT_FORWARD_ROUNDS = 2;
    public static final int DEFAULT_REVERSE_ROUNDS = 2;

    private Dde() {
    }

    /** Numbers per entity code: 2 per round, plus 2 for the seed. */
    public static int entityDimension(int forwardRounds, int reverseRounds, boolean includeSeed) {
        return 2 * (forwardRounds + reverseRounds + (includeSeed ? 1 : 0));
    }

    /**
     * The entity codes, one row of {@link #entityDimension} numbers per node.
     *
     * @param nodeCount nodes are 0 .. nodeCount-1
     * @param heads head node of each edge (the edge's direction is head → tail)
     * @param tails tail node of each edge, same length as {@code heads}
     * @param topic whether each node is a topic entity, length {@code nodeCount}
     */
    public static double[][] entityCodes(int nodeCount, int[] heads, int[] tails, boolean[] topic,
                                         int forwardRounds, int reverseRounds, boolean includeSeed) {
        if (heads.length != tails.length) {
            throw new IllegalArgumentException("heads and tails differ in length: " + heads.length + " vs " + tails.length);
        }
        if (topic.length != nodeCount) {
            throw new IllegalArgumentException("topic has " + topic.length + " entries for " + nodeCount + " nodes");
        }
        if (forwardRounds < 0 || reverseRounds < 0) {
            throw new IllegalArgumentException("round counts must be >= 0");
        }
        int dimension = entityDimension(forwardRounds, reverseRounds, includeSeed);
        double[][] codes = new double[nodeCount][dimension];

        // s0 as two flat arrays: [not-topic, topic].
        double[] seed0 = new double[nodeCount];
        double[] seed1 = new double[nodeCount];
        for (int v = 0; v < nodeCount; v++) {
            if (topic[v]) {
                seed1[v] = 1.0;
            } else {
                seed0[v] = 1.0;
            }
        }
        int column = 0;
        if (includeSeed) {
            write(codes, column, seed0, seed1);
            column += 2;
        }
        // Forward: messages flow head -> tail, so each node averages over its in-edges.
        column = propagate(codes, column, seed0, seed1, heads, tails, forwardRounds);
        // Reverse: messages flow tail -> head, so each node averages over its out-edges.
        propagate(codes, column, seed0, seed1, tails, heads, reverseRounds);
        return codes;
    }

    /** Runs {@code rounds} mean-aggregation rounds along from → to, writing each round's result. */
    private static int propagate(double[][] codes, int column, double[] start0, double[] start1,
                                 int[] from, int[] to, int rounds) {
        int nodeCount = start0.length;
        int[] inDegree = new int[nodeCount];
        for (int target : to) {
            inDegree[target]++;
        }
        double[] current0 = start0;
        double[] current1 = start1;
        for (int round = 0; round < rounds; round++) {
            double[] next0 = new double[nodeCount];
            double[] next1 = new double[nodeCount];
            for (int e = 0; e < from.length; e++) {
                next0[to[e]] += current0[from[e]];
                next1[to[e]] += current1[from[e]];
            }
            for (int v = 0; v < nodeCount; v++) {
                if (inDegree[v] > 0) {
                    next0[v] /= inDegree[v];
                    next1[v] /= inDegree[v];
                }
            }
            write(codes, column, next0, next1);
            column += 2;
            current0 = next0;
            current1 = next1;
        }
        return column;
    }

    private static void write(double[][] codes, int column, double[] part0, double[] part1) {
        for (int v = 0; v < codes.length; v++) {
            codes[v][column] = part0[v];
            codes[v][column + 1] = part1[v];
        }
    }
}
