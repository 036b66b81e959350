package io.kgqa.procedures.subgraphrag;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * DDE on small graphs whose codes were worked out by hand. Code layout per entity:
 * [s0] ‖ f1 ‖ f2 ‖ r1 ‖ r2, each part [not-topic, topic].
 */
class DdeTest {

    private static final double EPS = 1e-12;
    private static final double THIRD = 1.0 / 3.0;

    private static double[][] codes(int n, int[][] edges, boolean[] topic, boolean seed) {
        int[] heads = Arrays.stream(edges).mapToInt(e -> e[0]).toArray();
        int[] tails = Arrays.stream(edges).mapToInt(e -> e[1]).toArray();
        return Dde.entityCodes(n, heads, tails, topic, 2, 2, seed);
    }

    @Test
    void dimensions() {
        assertEquals(8, Dde.entityDimension(2, 2, false));
        assertEquals(10, Dde.entityDimension(2, 2, true));
        assertEquals(2, Dde.entityDimension(0, 0, true));
    }

    @Test
    void chainSeparatesForwardFromReverse() {
        // A -> B -> C, topic A.
        double[][] c = codes(3, new int[][] {{0, 1}, {1, 2}}, new boolean[] {true, false, false}, true);
        //                       s0      f1      f2      r1      r2
        assertArrayEquals(new double[] {0, 1, 0, 0, 0, 0, 1, 0, 1, 0}, c[0], EPS); // A: no in-edges; out to B (non-topic)
        assertArrayEquals(new double[] {1, 0, 0, 1, 0, 0, 1, 0, 0, 0}, c[1], EPS); // B: one hop after A
        assertArrayEquals(new double[] {1, 0, 1, 0, 0, 1, 0, 0, 0, 0}, c[2], EPS); // C: A's signal arrives in round 2
    }

    @Test
    void reverseRoundsFollowOutEdges() {
        // B -> A <- C, topic A: the topic signal reaches B and C only backwards.
        double[][] c = codes(3, new int[][] {{1, 0}, {2, 0}}, new boolean[] {true, false, false}, false);
        //                       f1      f2      r1      r2
        assertArrayEquals(new double[] {1, 0, 0, 0, 0, 0, 0, 0}, c[0], EPS); // mean of B and C's seeds
        assertArrayEquals(new double[] {0, 0, 0, 0, 0, 1, 0, 0}, c[1], EPS); // r1 = s0(A); r2 = r1(A) = 0 (A has no out-edge)
        assertArrayEquals(c[1], c[2], EPS);
    }

    @Test
    void meanOverSeveralInNeighbours() {
        // A -> D, B -> D, C -> D, topic A.
        double[][] c = codes(4, new int[][] {{0, 3}, {1, 3}, {2, 3}}, new boolean[] {true, false, false, false}, true);
        assertArrayEquals(new double[] {1, 0, 2 * THIRD, THIRD, 0, 0, 0, 0, 0, 0}, c[3], EPS);
    }

    @Test
    void parallelEdgesCountOncePerEdge() {
        // A -> C twice (two relations), B -> C once, topic A: A counts twice in C's mean (PyG mean over edges).
        double[][] c = codes(3, new int[][] {{0, 2}, {0, 2}, {1, 2}}, new boolean[] {true, false, false}, false);
        assertEquals(THIRD, c[2][0], EPS);
        assertEquals(2 * THIRD, c[2][1], EPS);
    }

    @Test
    void isolatedNodesKeepOnlyTheirSeed() {
        double[][] c = codes(3, new int[][] {{0, 1}}, new boolean[] {false, false, true}, true);
        assertArrayEquals(new double[] {0, 1, 0, 0, 0, 0, 0, 0, 0, 0}, c[2], EPS); // isolated topic
        double[][] noTopic = codes(2, new int[][] {}, new boolean[] {false, false}, true);
        assertArrayEquals(new double[] {1, 0, 0, 0, 0, 0, 0, 0, 0, 0}, noTopic[0], EPS);
        double[][] noSeed = codes(1, new int[][] {}, new boolean[] {true}, false);
        assertArrayEquals(new double[8], noSeed[0], EPS);
    }

    @Test
    void withoutSeedIsTheSameCodeMinusTheFirstPart() {
        int[][] edges = {{0, 1}, {1, 2}, {2, 0}, {3, 1}, {1, 1}};
        boolean[] topic = {true, false, false, true};
        double[][] with = codes(4, edges, topic, true);
        double[][] without = codes(4, edges, topic, false);
        for (int v = 0; v < 4; v++) {
            assertArrayEquals(Arrays.copyOfRange(with[v], 2, 10), without[v], EPS, "node " + v);
        }
    }

    @Test
    void selfLoopIsItsOwnNeighbour() {
        double[][] c = codes(1, new int[][] {{0, 0}}, new boolean[] {true}, false);
        assertArrayEquals(new double[] {0, 1, 0, 1, 0, 1, 0, 1}, c[0], EPS);
    }

    @Test
    void neighboursWithoutSignalCountAsZerosInTheMean() {
        int[][] edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {4, 3}, {3, 5}};
        double[][] c = codes(6, edges, new boolean[] {true, false, false, false, false, false}, true);
        // Node 3: in-edges from 1, 2, 4; f2 = mean(f1(1), f1(2), f1(4)) = mean([0,1], [0,1], [0,0]).
        assertArrayEquals(new double[] {0, 2 * THIRD}, Arrays.copyOfRange(c[3], 4, 6), EPS);
    }

    @Test
    void rejectsInconsistentInput() {
        assertThrows(IllegalArgumentException.class,
                () -> Dde.entityCodes(2, new int[] {0}, new int[] {}, new boolean[2], 2, 2, true));
        assertThrows(IllegalArgumentException.class,
                () -> Dde.entityCodes(2, new int[] {0}, new int[] {1}, new boolean[3], 2, 2, true));
    }
}
