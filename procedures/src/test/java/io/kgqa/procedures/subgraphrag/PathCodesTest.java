package io.kgqa.procedures.subgraphrag;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class PathCodesTest {

    // Topic 0; 0 -r0-> 1; 2 -r1-> 1; 0 -r2-> 3; 3 -r1-> 2. Node 2 is two steps out by two routes: from 1
    // against r1, and from 3 along r1. (The numbers are kgqa.training.subgraphrag.paths.path_weights' for the
    // same graph; tests/test_subgraphrag_training.py checks the Python side.)
    private static final int[] HEADS = {0, 2, 0, 3};
    private static final int[] RELATIONS = {0, 1, 2, 1};
    private static final int[] TAILS = {1, 1, 3, 2};
    private static final boolean[] TOPIC = {true, false, false, false};

    @Test
    void codesAverageTheParentsRoutesPerStepAndDirection() {
        PathCodes.Code[] codes = PathCodes.compute(4, HEADS, RELATIONS, TAILS, TOPIC, 2, 3);
        assertArrayEquals(new int[0], codes[0].columns()); // the topic
        assertArrayEquals(new int[] {0}, codes[1].columns()); // step 1, along r0
        assertArrayEquals(new double[] {1.0}, codes[1].weights());
        assertArrayEquals(new int[] {2}, codes[3].columns()); // step 1, along r2
        // node 2: step 1 along r0 or r2 (1/2 each), step 2 along r1 (from 3) and against r1 (from 1)
        assertArrayEquals(new int[] {0, 2, 7, 10}, codes[2].columns());
        assertArrayEquals(new double[] {0.5, 0.5, 0.5, 0.5}, codes[2].weights(), 1e-12);
    }

    @Test
    void stepsBeyondTheCodeOnlyInheritAndUnreachedNodesStayEmpty() {
        // chain 0 -r0-> 1 -r0-> 2 -r0-> 3 and an isolated 4: with one step, 2 and 3 inherit 1's code
        int[] heads = {0, 1, 2};
        int[] relations = {0, 0, 0};
        int[] tails = {1, 2, 3};
        boolean[] topic = {true, false, false, false, false};
        PathCodes.Code[] codes = PathCodes.compute(5, heads, relations, tails, topic, 1, 1);
        for (int v = 1; v <= 3; v++) {
            assertArrayEquals(new int[] {0}, codes[v].columns());
        }
        assertEquals(0, codes[4].columns().length);
    }

    @Test
    void expandMixesTheRelationVectorsPerSlot() {
        PathCodes.Code[] codes = PathCodes.compute(4, HEADS, RELATIONS, TAILS, TOPIC, 2, 3);
        float[][] vectors = {{1, 0}, {0, 1}, {2, 2}};
        float[] expanded = PathCodes.expand(codes[2], 2, vectors, 2);
        // slot 0 (step 1 along): (r0 + r2) / 2; slot 1: nothing; slot 2 (step 2 along): r1 / 2; slot 3 against
        assertArrayEquals(new float[] {1.5f, 1f, 0, 0, 0, 0.5f, 0, 0.5f}, expanded, 1e-6f);
        vectors[1] = null; // a relation without a stored embedding counts as zeros
        assertArrayEquals(new float[] {1.5f, 1f, 0, 0, 0, 0, 0, 0}, PathCodes.expand(codes[2], 2, vectors, 2), 1e-6f);
    }

    @Test
    void badArgumentsAreNamed() {
        assertThrows(IllegalArgumentException.class,
                () -> PathCodes.compute(4, HEADS, new int[] {0}, TAILS, TOPIC, 2, 3));
        assertThrows(IllegalArgumentException.class,
                () -> PathCodes.compute(4, HEADS, RELATIONS, TAILS, TOPIC, 0, 3));
        assertThrows(IllegalArgumentException.class,
                () -> PathCodes.compute(3, HEADS, RELATIONS, TAILS, TOPIC, 2, 3));
    }
}
