package io.kgqa.procedures.subgraphrag;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PathSelectionTest {

    // Nodes: 0 topic film, 1 actor, 2 other film, 3 its director, 4 the topic's director, 5 a third film,
    // 6 its director. Triples (head, tail, score):
    //   0: 0-1  4.0   topic starred actor 1
    //   1: 2-1  3.0   film 2 starred actor 1
    //   2: 2-3  1.0   film 2 directed by 3        (the 3-hop answer)
    //   3: 0-4  9.0   topic directed by 4         (high, but a 1-hop triple)
    //   4: 5-4  8.0   film 5 directed by 4
    //   5: 5-6 -6.0   film 5 directed by 6        (a 3-hop end, unlikely)
    private static final int[] HEADS = {0, 2, 2, 0, 5, 5};
    private static final int[] TAILS = {1, 1, 3, 4, 4, 6};
    private static final float[] SCORES = {4f, 3f, 1f, 9f, 8f, -6f};
    private static final boolean[] TOPIC = {true, false, false, false, false, false, false};

    @Test
    void topKMissesTheThirdHopThatWalksKeep() {
        // the 3 best triples alone: 3, 4, 0; none reaches node 3
        int[] walks = PathSelection.select(HEADS, TAILS, SCORES, TOPIC, 3, 3);
        assertArrayEquals(new int[]{0, 1, 2}, walks);
    }

    @Test
    void walksAreRankedByTheirSummedLogSigmoid() {
        List<PathSelection.Walk> walks = PathSelection.bestWalks(HEADS, TAILS, SCORES, TOPIC, 3);
        assertEquals(List.of(3, 6), walks.stream().map(PathSelection.Walk::end).toList());
        double expected = PathSelection.logSigmoid(4f) + PathSelection.logSigmoid(3f) + PathSelection.logSigmoid(1f);
        assertEquals(expected, walks.get(0).score(), 1e-12);
        assertArrayEquals(new int[]{3, 4, 5}, walks.get(1).triples());
    }

    @Test
    void walksWithinKeepWhatFitsInTheTripleBudget() {
        // both walks take 3 distinct triples: k = 5 keeps the first only, k = 6 both, k = 2 none
        assertEquals(List.of(3), PathSelection.walksWithin(HEADS, TAILS, SCORES, TOPIC, 3, 5).stream()
                .map(PathSelection.Walk::end).toList());
        assertEquals(List.of(3, 6), PathSelection.walksWithin(HEADS, TAILS, SCORES, TOPIC, 3, 6).stream()
                .map(PathSelection.Walk::end).toList());
        assertTrue(PathSelection.walksWithin(HEADS, TAILS, SCORES, TOPIC, 3, 2).isEmpty());
        // one step: each neighbour of the topic is its own walk, best first
        assertEquals(List.of(4, 1), PathSelection.walksWithin(HEADS, TAILS, SCORES, TOPIC, 1, 10).stream()
                .map(PathSelection.Walk::end).toList());
        assertThrows(IllegalArgumentException.class,
                () -> PathSelection.walksWithin(HEADS, TAILS, SCORES, TOPIC, 0, 3));
    }

    @Test
    void theRestOfKIsTheBestRemainingTriples() {
        int[] chosen = PathSelection.select(HEADS, TAILS, SCORES, TOPIC, 3, 5);
        // walk to 3 (0, 1, 2); walk to 6 needs 3 more and does not fit; then 3 and 4 by score
        assertArrayEquals(new int[]{0, 1, 2, 3, 4}, chosen);
        int[] all = PathSelection.select(HEADS, TAILS, SCORES, TOPIC, 3, 100);
        assertEquals(6, all.length);
    }

    @Test
    void walksNeverEnterATopicEntityNorTurnBack() {
        // 0 and 2 both topic: the walk 0-1-2 is not allowed, and 1 cannot go back over triple 0
        boolean[] twoTopics = {true, false, true, false, false, false, false};
        List<PathSelection.Walk> walks = PathSelection.bestWalks(HEADS, TAILS, SCORES, twoTopics, 2);
        for (PathSelection.Walk walk : walks) {
            assertTrue(walk.end() != 0 && walk.end() != 2, walk.toString());
        }
        assertEquals(List.of(5), walks.stream().map(PathSelection.Walk::end).toList());
    }

    @Test
    void noWalkOfThatLengthFallsBackToTheTopK() {
        assertArrayEquals(new int[]{3, 4}, PathSelection.select(HEADS, TAILS, SCORES, TOPIC, 6, 2));
        assertArrayEquals(new int[]{3, 4}, PathSelection.select(HEADS, TAILS, SCORES, new boolean[7], 3, 2));
    }

    @Test
    void argumentsAreChecked() {
        assertThrows(IllegalArgumentException.class, () -> PathSelection.select(HEADS, TAILS, SCORES, TOPIC, 0, 3));
        assertThrows(IllegalArgumentException.class, () -> PathSelection.select(HEADS, TAILS, SCORES, TOPIC, 2, 0));
        assertThrows(IllegalArgumentException.class,
                () -> PathSelection.select(HEADS, new int[]{1}, SCORES, TOPIC, 2, 3));
        assertEquals(-1e9, PathSelection.logSigmoid(Float.NaN));
        assertEquals(0.0, PathSelection.logSigmoid(100f), 1e-12);
        assertEquals(-100.0, PathSelection.logSigmoid(-100f), 1e-9);
    }
}
